"""An ablation or comparison still running when the main input translates another sentence:
its late answer is of a sentence the window no longer shows, so it is cleared like a result
already on screen (README: "a main translation of another sentence clears an ablation (and a
comparison whose A was the main input)"), whichever of the two answers arrives first.

The analysis runs are the real core code, held until the main translation is on screen."""

from __future__ import annotations

import threading

from PySide6 import QtCore

import gui.workers.analysis_worker
from tests.support.gui import WORK_TIMEOUT_MS, do

TEXT = "집에 누군가 있어?"
OTHER = "제발 앉아."


def hold(monkeypatch, name: str):
    """Make ``gui.workers.analysis_worker.<name>`` wait for the returned ``release`` event before it runs;
    ``entered`` is set once the run has started."""
    entered, release = threading.Event(), threading.Event()
    real = getattr(gui.workers.analysis_worker, name)

    def held(*args, **kwargs):
        entered.set()
        assert release.wait(20), "the test never released the run"
        return real(*args, **kwargs)

    monkeypatch.setattr(gui.workers.analysis_worker, name, held)
    return entered, release


def translate_main(qtbot, window, text: str) -> None:
    window.inputs.text.setText(text)
    do(qtbot, window, window.translate)
    assert window.result.source.text == text


def start_held_ablation(qtbot, window, monkeypatch):
    """Translate TEXT, ablate head 1:2 of it and hold that run inside core; returns
    (analysis tabs, ablation panel, release event)."""
    translate_main(qtbot, window, TEXT)
    tabs, p = window.analysis, window.analysis.ablation
    entered, release = hold(monkeypatch, "ablation_report")
    p.heads.setText("1:2")
    qtbot.mouseClick(p.ablate_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(entered.is_set, timeout=WORK_TIMEOUT_MS)  # ablating TEXT, held
    return tabs, p, release


def test_late_ablation_of_the_old_sentence_is_cleared(qtbot, window, monkeypatch):
    tabs, p, release = start_held_ablation(qtbot, window, monkeypatch)
    translate_main(qtbot, window, OTHER)  # the main window now shows OTHER
    with qtbot.waitSignal(tabs.answered, timeout=WORK_TIMEOUT_MS):
        release.set()
    assert p.report is None and p.npz_extra() == {}
    assert "sentence changed" in p.status.text()


def test_late_ablation_of_the_shown_sentence_stays(qtbot, window, monkeypatch):
    tabs, p, release = start_held_ablation(qtbot, window, monkeypatch)
    translate_main(qtbot, window, TEXT)  # the same sentence again: the ablation still applies
    with qtbot.waitSignal(tabs.answered, timeout=WORK_TIMEOUT_MS):
        release.set()
    assert p.report is not None and p.report.result.original.source.text == TEXT
    assert p.report.result.heads == [(1, 2)] and str(p.npz_extra()["ablate_source"]) == TEXT


def test_late_comparison_whose_a_was_the_old_sentence_is_cleared(qtbot, window, monkeypatch):
    translate_main(qtbot, window, TEXT)
    tabs, c = window.analysis, window.analysis.compare
    c.set_mode("inputs")
    c.text_b.setText("앉아.")  # A empty: the main input (TEXT)
    entered, release = hold(monkeypatch, "translate")
    qtbot.mouseClick(c.compare_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(entered.is_set, timeout=WORK_TIMEOUT_MS)
    translate_main(qtbot, window, OTHER)
    with qtbot.waitSignal(tabs.answered, timeout=WORK_TIMEOUT_MS):
        release.set()
    assert c.outcome is None and c.npz_extra() == {}
    assert "sentence changed" in c.status.text()
