"""The app, offscreen, driven like a user: type, translate, step; compare what is drawn
with an independent run of the decoding engine."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.session import DecodeSession
from core.transformer.masks import causal_mask
from gui.widgets.heatmap import LUT_POINTS
from tests.support.gui import TEXT, do, type_and_translate


def reference_session(tiny_checkpoint, text=TEXT):
    ck = load_checkpoint(tiny_checkpoint, device="cpu")
    s = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, text)
    s.run()
    return s


def ticks(axis):
    return [label for _, label in axis._tickLevels[0]]


def test_heatmaps_equal_model_attention_while_stepping(qtbot, window, tiny_checkpoint):
    result = type_and_translate(qtbot, window)
    ref = reference_session(tiny_checkpoint)
    maps = ref.maps()
    assert window.inputs.text.text() == TEXT
    assert result.translation == ref.translation
    do(qtbot, window, lambda: window.controls.set_position(0))
    for _ in range(3):
        do(qtbot, window, lambda: qtbot.mouseClick(window.controls.step_button, QtCore.Qt.MouseButton.LeftButton))
    k = 3
    assert window.controls.position == k
    s = len(ref.source.ids)
    assert s != k  # the cross-attention map below is not square

    window.set_view("cross")
    window.select(1, 2)
    img = window.heatmap.image.image
    assert img.shape == (k, s)  # T rows (queries) × S columns (keys): not transposed
    np.testing.assert_allclose(img, maps.cross[1, 2, :k].numpy(), atol=1e-6)
    assert ticks(window.heatmap.plot.getAxis("left")) == maps.tgt_tokens[:k]
    assert ticks(window.heatmap.plot.getAxis("bottom")) == ref.source.tokens
    grid_img = window.grid.images[1 * 4 + 2].image.image  # layer 2, head 3 thumbnail
    np.testing.assert_allclose(grid_img, maps.cross[1, 2, :k].numpy(), atol=1e-6)

    window.set_view("decoder")
    img = window.heatmap.image.image
    np.testing.assert_allclose(img, maps.decoder_self[1, 2, :k, :k].numpy(), atol=1e-6)
    assert (img[np.triu_indices(k, 1)] == 0).all()
    # cached decoding: the model was given no self mask; key j did not exist yet for query t < j
    assert not window.masks.decoder_self.mask.any()
    assert window.masks.decoder_self.present.tolist() == (~causal_mask(k)).tolist()
    assert window.masks.encoder.mask.tolist() == [[False] * s]
    assert len(window.grid.images) == 2 * 4 + 2  # every layer × head, then one derived mean per layer

    window.set_view("encoder")
    np.testing.assert_allclose(window.heatmap.image.image, maps.encoder_self[1, 2].numpy(), atol=1e-6)
    assert window.heatmap.describe(0, 1).startswith(f"query 1 ⟨{ref.source.tokens[0]}⟩ → key 2")


def test_back_and_keyboard_grow_and_shrink_decoder_rows(qtbot, window):
    type_and_translate(qtbot, window)
    window.set_view("decoder")
    do(qtbot, window, lambda: qtbot.keyClick(window, QtCore.Qt.Key.Key_Home))
    assert window.controls.position == 0
    assert "no decoder step yet" in window.heatmap.plot.titleLabel.text
    do(qtbot, window, lambda: qtbot.keyClick(window, QtCore.Qt.Key.Key_Right))
    do(qtbot, window, lambda: qtbot.keyClick(window, QtCore.Qt.Key.Key_Right))
    assert window.heatmap.image.image.shape == (2, 2)
    do(qtbot, window, lambda: qtbot.keyClick(window, QtCore.Qt.Key.Key_Left))
    assert window.heatmap.image.image.shape == (1, 1)
    do(qtbot, window, lambda: qtbot.keyClick(window, QtCore.Qt.Key.Key_End))
    assert window.controls.position == len(window.result.steps)


def test_padding_demo_shows_masked_pad_columns(qtbot, window):
    window.inputs.pad_to.setValue(20)
    result = type_and_translate(qtbot, window)
    window.set_view("cross")
    s_real = result.source.n_real
    img = window.heatmap.image.image
    assert img.shape[1] == 20 and (img[:, s_real:] == 0).all()
    assert window.heatmap.mask[:, s_real:].all() and not window.heatmap.mask[:, :s_real].any()
    assert window.masks.encoder.mask[0].tolist() == [False] * s_real + [True] * (20 - s_real)


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


def test_export_writes_one_named_file_and_says_so(qtbot, window, tmp_path, monkeypatch):
    from gui.export.files import start_dir
    from gui.window import view_menu as display

    type_and_translate(qtbot, window)
    window.set_view("cross")
    asked = []

    def fake_dialog(parent, caption, proposed, filt):
        asked.append(proposed)
        return str(tmp_path / f"out-{len(asked)}"), filt

    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", fake_dialog)
    before = start_dir()
    out = display.export_dialog(window, "map")
    assert asked[0].startswith(str(before)) and asked[0].endswith("attention-map.png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out-1.png"]  # one file, no silent -grid.png
    msg = window.status.currentMessage()
    assert str(out) in msg and "enlarged map" in msg
    img = QtGui.QImage(str(out))
    assert img.width() == 2 * int(window.heatmap.ci.boundingRect().width())
    assert start_dir() == tmp_path  # the next dialog opens where the last export went
    display.export_dialog(window, "grid")
    assert "grid" in window.status.currentMessage() and (tmp_path / "out-2.png").exists()
    k = window.controls.position
    path = display.export_dialog(window, "npz")
    data = np.load(path)
    np.testing.assert_array_equal(data["cross_weights"], window.result.maps.cross[:, :, :k].numpy())
    assert list(data["src_tokens"]) == window.result.maps.src_tokens
    assert int(data["step"]) == k
    assert data["selected"].tolist() == [window.selected[0] + 1, window.selected[1] + 1]  # 1-based, as titles
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out-1.png", "out-2.png", "out-3.npz"]


def test_font_size_and_colormap(qtbot, window):
    type_and_translate(qtbot, window)
    size = window.font_size
    window.change_font(+2)
    assert QtWidgets.QApplication.instance().font().pointSize() == size + 2
    window.set_colormap("cividis")
    cividis = pg.colormap.get("cividis")
    # the enlarged map's colour bar sets its own 256-entry table; the thumbnails have LUT_POINTS entries
    np.testing.assert_array_equal(np.asarray(window.heatmap.image.lut), cividis.getLookupTable(nPts=256))
    np.testing.assert_array_equal(np.asarray(window.grid.images[0].image.lut), cividis.getLookupTable(nPts=LUT_POINTS))


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
