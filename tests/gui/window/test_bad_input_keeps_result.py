"""Bad input loses nothing: a checkpoint that fails to load keeps the previous model, and bad or
hostile text typed into the window keeps the last result on screen (no NaN drawn)."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtCore

from tests.support.gui import do, type_and_translate


def test_failed_checkpoint_load_keeps_previous_model(qtbot, window, tmp_path, no_modal_dialogs):
    before = type_and_translate(qtbot, window).translation
    shown = no_modal_dialogs
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "config.json").write_text("{not json")
    with qtbot.waitSignal(window.worker.load_failed, timeout=10000):
        window.load_checkpoint(str(bad), "cpu")
    qtbot.waitUntil(lambda: bool(shown), timeout=5000)
    assert "missing" in shown[0] or "invalid JSON" in shown[0]
    after = type_and_translate(qtbot, window).translation
    assert after == before


def test_bad_input_keeps_last_result(qtbot, window):
    good = type_and_translate(qtbot, window)
    window.inputs.text.setText("   ")
    with qtbot.waitSignal(window.worker.failed, timeout=10000):
        window.translate()
    qtbot.waitUntil(lambda: "empty" in window.status.currentMessage(), timeout=5000)
    assert window.result is good
    assert window.heatmap.image.image is not None


@pytest.mark.parametrize(
    "text", ["나는 😀 행복해", "１２３！？", "나는\u200b학생\ufeff입니다", "hello world", "가나다라마바사아자차카 " * 60, "나"]
)
def test_hostile_input_through_the_gui(qtbot, window, text):
    window.inputs.text.setText(text)
    do(qtbot, window, window.translate)
    do(qtbot, window, lambda: qtbot.mouseClick(window.controls.end_button, QtCore.Qt.MouseButton.LeftButton))
    r = window.result
    assert r.source.text == text
    img = window.heatmap.image.image
    assert img is not None and np.isfinite(img).all()
    if len(text) > 300:
        qtbot.waitUntil(lambda: "only the first" in window.status.currentMessage(), timeout=5000)
