"""The window as a presenter uses it: fonts scale every text, sizes hold at laptop and
projector resolutions, presentation mode, contrast, hover read-out, re-translation, --layer/--head,
titles that say when the causal mask was off, and the enlarged head kept through the Masks view."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from gui.state.view_model import ViewModel
from gui.widgets.fonts import minimum_sizes
from gui.window.main_window import HOVER_HINT
from gui.window.view_menu import toggle_present
from tests.gui.widgets.test_thumbnail_colours import rgba_of
from tests.support import ROOT
from tests.support.gui import TEXT, do, open_window, type_and_translate  # the `window` fixture: tests/conftest.py


def _px(css: str) -> int:
    return int(css.removesuffix("pt"))


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_ctrl_plus_scales_every_text_and_the_window_keeps_its_size(qtbot, window, size):
    window.resize(*size)
    type_and_translate(qtbot, window)
    window.set_view("cross")
    base = window.font_size
    for _ in range(3):
        qtbot.keyClick(window, QtCore.Qt.Key.Key_Plus, QtCore.Qt.KeyboardModifier.ControlModifier)
    qtbot.wait(50)
    pt = window.font_size
    assert pt == base + 6
    hm = window.heatmap
    assert _px(hm.plot.titleLabel.opts["size"]) == pt + 1  # title
    assert _px(hm.plot.getAxis("left").labelStyle["font-size"]) == pt  # axis titles
    assert _px(hm.plot.getAxis("bottom").labelStyle["font-size"]) == pt
    assert hm.colorbar.axis.style["tickFont"].pointSize() == pt  # colour-bar values
    assert hm.plot.getAxis("left").style["tickFont"].pointSize() == pt  # token labels
    assert all(t.textItem.font().pointSize() == pt for t in window.topk.texts)  # top-k values
    assert window.masks.decoder_self.getAxis("left").style["tickFont"].pointSize() == pt
    # the title's row is as tall as its text (pyqtgraph fixes it at 30 px otherwise)
    assert hm.plot.titleLabel.maximumHeight() >= QtGui.QFontMetrics(hm.font).height()
    assert (window.width(), window.height()) == size  # never widens itself
    mins = minimum_sizes(hm.font)
    for name, (w, h) in mins.items():  # no panel collapses: the window scrolls instead
        widget = getattr(window, name)
        assert widget.width() >= w and widget.height() >= h, name
    # colour-bar labels are whole: the bar's axis is wide enough for "1.0" at this font
    assert hm.colorbar.axis.width() >= QtGui.QFontMetricsF(hm.font).horizontalAdvance("0.0")
    assert hm.colorbar.sceneBoundingRect().right() <= hm.width() + 1
    for kind in ("cross", "masks"):  # nothing is laid out wider than the widget that shows it
        window.set_view(kind)
        qtbot.wait(50)
        for w in (window.grid, hm):
            assert w.ci.geometry().width() <= w.width() + 1, (kind, type(w).__name__)
        for v in window.masks.views():
            assert v.getPlotItem().geometry().width() <= v.width() + 1
    qtbot.keyClick(window, QtCore.Qt.Key.Key_0, QtCore.Qt.KeyboardModifier.ControlModifier)
    assert window.font_size == base


def test_no_axes_before_the_first_result_and_no_jump(qtbot, window):
    assert not window.heatmap.plot.getAxis("left").isVisible()
    assert not window.heatmap.colorbar.isVisible()
    assert not window.topk.getAxis("left").isVisible() and not window.topk.getAxis("bottom").isVisible()
    assert not any(v.getAxis("bottom").isVisible() for v in window.masks.views())
    top = window.controls.mapTo(window, QtCore.QPoint(0, 0)).y()
    type_and_translate(qtbot, window)
    qtbot.wait(50)
    assert window.heatmap.plot.getAxis("left").isVisible() and window.heatmap.colorbar.isVisible()
    assert window.controls.mapTo(window, QtCore.QPoint(0, 0)).y() == top  # the controls stay put


def test_hover_clears_on_leave_and_new_result_and_counts_from_one(qtbot, window):
    type_and_translate(qtbot, window)
    window.set_view("encoder")
    hm = window.heatmap
    centre = hm.view.mapViewToScene(QtCore.QPointF(0.5, 0.5))
    hm._on_mouse(centre)
    text = window.hover_label.text()
    assert text.startswith(f"query 1 ⟨{window.result.maps.src_tokens[0]}⟩ → key 1")
    QtWidgets.QApplication.sendEvent(hm, QtCore.QEvent(QtCore.QEvent.Type.Leave))
    assert window.hover_label.text() == HOVER_HINT
    hm._on_mouse(centre)
    assert window.hover_label.text() == text
    window.inputs.text.setText("외로워.")
    do(qtbot, window, window.translate)
    assert window.hover_label.text() == HOVER_HINT  # the old sentence's tokens are gone


def test_per_map_contrast_and_cell_values(qtbot, window):
    type_and_translate(qtbot, window)
    do(qtbot, window, lambda: window.controls.set_position(3))
    window.set_view("cross")
    k = window.controls.position
    layer, head = window.selected
    w = window.result.maps.cross[layer, head, :k].numpy()
    window.scale_actions["per-map"].trigger()
    hm = window.heatmap
    assert hm.levels == pytest.approx((float(w.min()), float(w.max())))
    assert tuple(hm.image.levels) == pytest.approx(hm.levels)
    assert "per-map range" in hm.colorbar.axis.labelText
    rows, cols = w.shape
    shown = hm.values.shown()
    assert len(shown) == rows * cols <= 16 * 16
    assert shown[0] in (f"{w[0, 0]:.2f}", f"{w[0, 0]:.2f}"[1:])
    window.scale_actions["fixed"].trigger()
    assert hm.levels == (0.0, 1.0) and "fixed [0, 1]" in hm.colorbar.axis.labelText


def test_changing_pad_or_beam_translates_again(qtbot, window):
    type_and_translate(qtbot, window)
    do(qtbot, window, lambda: window.inputs.pad_to.setValue(20))
    assert len(window.result.source.ids) == 20
    do(qtbot, window, lambda: window.inputs.decoding.setCurrentIndex(1))
    assert window.result.beam == window.inputs.beam.value()


def test_presentation_mode_cycles_kind_layer_head(qtbot, window):
    type_and_translate(qtbot, window)
    window.set_view("cross")
    window.select(0, 0)
    qtbot.keyClick(window, QtCore.Qt.Key.Key_F11)
    pw = window.present_window
    assert pw is not None and pw.isVisible()
    assert pw.heatmap.font.pointSize() >= 22
    assert "layer 1 / 2, head 1 / 4" in pw.heatmap.plot.titleLabel.text
    k = window.controls.position
    np.testing.assert_allclose(pw.heatmap.image.image, window.result.maps.cross[0, 0, :k].numpy(), atol=1e-6)
    qtbot.keyClick(pw, QtCore.Qt.Key.Key_H)
    qtbot.keyClick(pw, QtCore.Qt.Key.Key_L)
    assert window.selected == (1, 1) and "layer 2 / 2, head 2 / 4" in pw.heatmap.plot.titleLabel.text
    np.testing.assert_allclose(pw.heatmap.image.image, window.result.maps.cross[1, 1, :k].numpy(), atol=1e-6)
    qtbot.keyClick(pw, QtCore.Qt.Key.Key_V)
    assert window.kind == "masks" and "mask" in pw.heatmap.plot.titleLabel.text
    qtbot.keyClick(pw, QtCore.Qt.Key.Key_Escape)
    assert not pw.isVisible()


def _run(*args, env=None):
    import os

    e = dict(os.environ, QT_QPA_PLATFORM="offscreen", **(env or {}))
    return subprocess.run([sys.executable, "main.py", *args], cwd=ROOT, capture_output=True, text=True, env=e, timeout=600)


def test_layer_head_checked_and_one_based_on_every_path(tiny_checkpoint, tmp_path):
    for path_args in ([], ["--screenshot", str(tmp_path / "x.png")]):
        r = _run("--checkpoint", str(tiny_checkpoint), "--text", TEXT, "--layer", "0", "--head", "0", *path_args)
        assert r.returncode == 2 and "numbered from 1" in r.stderr
        r = _run("--checkpoint", str(tiny_checkpoint), "--text", TEXT, "--layer", "3", *path_args)
        assert r.returncode == 2 and r.stderr.strip().endswith("(1-based) for the cross view")
        assert "--layer must be 1..2 and --head 1..4" in r.stderr


def test_title_names_the_head_it_shows(qtbot, window):
    type_and_translate(qtbot, window)
    window.set_view("decoder")
    window.select(-5, 99)  # out of range either way: clamped, and the title says which
    k = window.controls.position
    assert "layer 1, head 4" in window.heatmap.plot.titleLabel.text
    np.testing.assert_allclose(window.heatmap.image.image, window.result.maps.decoder_self[0, 3, :k, :k].numpy(), atol=1e-6)


def test_screenshot_at_200_percent_scaling(tiny_checkpoint, tmp_path):
    out = tmp_path / "hidpi.png"
    r = _run(
        "--checkpoint",
        str(tiny_checkpoint),
        "--text",
        TEXT,
        "--size",
        "1366x768",
        "--screenshot",
        str(out),
        env={"QT_SCALE_FACTOR": "2"},
    )
    assert r.returncode == 0, r.stderr
    img = QtGui.QImage(str(out))
    assert (img.width(), img.height()) == (2 * 1366, 2 * 768)  # the requested size, at twice the pixels


def _rgb(img: QtGui.QImage) -> np.ndarray:
    img = img.convertToFormat(QtGui.QImage.Format.Format_RGB888)
    raw = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine())
    return raw[:, : img.width() * 3].reshape(img.height(), img.width(), 3).astype(int)


def test_svg_equals_png_with_text_as_outlines(qtbot, window, tmp_path):
    from gui.export.files import export_png
    from gui.export.svg import export_svg, rasterize_svg

    window.inputs.pad_to.setValue(20)  # masked pad columns: the hatch overlay is an image too
    type_and_translate(qtbot, window)
    window.set_view("cross")
    qtbot.wait(50)
    hm = window.heatmap
    png, (pw, ph) = export_png(tmp_path / "map.png", hm)
    svg, (sw, sh) = export_svg(tmp_path / "map.svg", hm)
    text = svg.read_text(encoding="utf-8")
    assert "<text" not in text and "<path" in text  # Hangul and all labels as outlines
    a, b = _rgb(rasterize_svg(svg, pw, ph)), _rgb(QtGui.QImage(str(png)))
    assert a.shape == b.shape == (ph, pw, 3) and pw == 2 * sw
    diff = np.abs(a - b)
    assert diff.mean() < 3.0 and (diff.max(-1) > 60).mean() < 0.02  # only anti-aliased edges differ
    scale = pw / hm.width()
    rows, cols = hm.matrix.shape
    for r, c in [(0, 0), (rows - 1, cols - 1), (rows // 2, 1), (0, cols - 1)]:  # every cell where it belongs
        p = hm.view.mapViewToScene(QtCore.QPointF(c + 0.5, r + 0.5))
        x, y = int(p.x() * scale), int(p.y() * scale)
        assert np.abs(a[y, x] - b[y, x]).max() <= 8, (r, c)


def test_cell_text_never_prints_a_near_one_weight_as_zero():
    from gui.widgets.heatmap import cell_text

    assert [cell_text(v) for v in (0.0, 0.254, 0.994, 0.996, 1.0)] == [".00", ".25", ".99", "1.0", "1.0"]


def test_presentation_mode_shows_the_derived_cell_the_window_enlarges(qtbot, window):
    type_and_translate(qtbot, window)
    window.set_view("encoder")
    window.select(1, 2)
    window.cell_clicked(("rollout", 0))  # as a click on the grid's rollout cell does
    qtbot.keyClick(window, QtCore.Qt.Key.Key_F11)
    pw = window.present_window
    from core.analysis import head_stats

    rollout = head_stats.rollout(window.result.maps.encoder_self).numpy()
    assert "rollout" in pw.heatmap.plot.titleLabel.text and "(derived)" in pw.heatmap.plot.titleLabel.text
    np.testing.assert_allclose(pw.heatmap.image.image, rollout, atol=1e-6)
    np.testing.assert_allclose(pw.heatmap.image.image, window.heatmap.image.image, atol=0)
    # M: the current layer's mean over heads, in both windows; L steps to the next layer's mean
    window.set_view("cross")
    k = window.controls.position
    qtbot.keyClick(pw, QtCore.Qt.Key.Key_M)
    layer = window.selected[0]
    assert window.vm.derived == ("mean", layer) and "mean over heads (derived)" in pw.heatmap.plot.titleLabel.text
    np.testing.assert_allclose(pw.heatmap.image.image, window.result.maps.cross[layer, :, :k].mean(0).numpy(), atol=1e-6)
    np.testing.assert_allclose(pw.heatmap.image.image, window.heatmap.image.image, atol=0)
    qtbot.keyClick(pw, QtCore.Qt.Key.Key_L)
    assert window.vm.derived == ("mean", (layer + 1) % 2)
    np.testing.assert_allclose(
        pw.heatmap.image.image, window.result.maps.cross[(layer + 1) % 2, :, :k].mean(0).numpy(), atol=1e-6
    )
    qtbot.keyClick(pw, QtCore.Qt.Key.Key_M)  # back to a head
    assert window.vm.derived is None and "head" in pw.heatmap.plot.titleLabel.text


# --- Teacher forcing with *Causal mask OFF*: the decoder self-attention the model computed had no
# mask, so no title may call it "masked"; each title says the mask was off (main window, derived
# cells, alignment lines, Present mode), and the column axis title fits beside the colour bar at the
# app's default window size (it ran under the colour bar: "target key (all T: no causal mask) (column").

CAUSAL_OFF_REFERENCE = "Is someone at home?"  # teacher forcing of TEXT ("집에 누군가 있어?")


def causal_off_window(qtbot, tiny_checkpoint):
    win = open_window(qtbot, tiny_checkpoint, (1600, 950))  # the app's default --size
    win.inputs.text.setText(TEXT)
    win.inputs.reference.setText(CAUSAL_OFF_REFERENCE)
    win.live.reference.causal_off.setChecked(True)  # teacher forcing re-runs only with a result
    do(qtbot, win, win.translate)
    assert win.result.mode == "teacher_forced" and win.result.causal is False
    win.set_view("decoder")
    win.select(1, 2)
    return win


def fits(heatmap) -> bool:
    axis = heatmap.plot.getAxis("bottom")
    return axis.label.boundingRect().width() <= axis.width()


def test_titles_say_the_causal_mask_was_off(qtbot, tiny_checkpoint):
    win = causal_off_window(qtbot, tiny_checkpoint)
    title = win.heatmap.plot.titleLabel.text
    assert title.startswith("Decoder self-attention, causal mask OFF — layer 2, head 3"), title
    assert "masked" not in title
    assert fits(win.heatmap), win.heatmap.plot.getAxis("bottom").labelText
    win.cell_clicked(("mean", 1))  # a derived cell: the layer mean
    assert win.heatmap.plot.titleLabel.text.startswith("Decoder self-attention, causal mask OFF — layer 2, mean")
    toggle_present(win)
    win.present_window.refresh()
    assert win.present_window.heatmap.plot.titleLabel.text.startswith("Decoder self-attention, causal mask OFF")
    win.present_window.close()
    win.select(0, 0)
    win.heads.map_tabs.setCurrentWidget(win.heads.align)
    qtbot.waitUntil(lambda: "causal mask OFF" in win.heads.lines.title, timeout=5000)


def test_with_the_causal_mask_the_title_says_masked(qtbot, tiny_checkpoint):
    win = causal_off_window(qtbot, tiny_checkpoint)
    do(qtbot, win, lambda: win.live.reference.causal_off.setChecked(False))
    assert win.result.causal is True
    assert win.heatmap.plot.titleLabel.text.startswith("Decoder masked self-attention — layer 2, head 3")
    assert fits(win.heatmap)


# --- Passing through the Masks view (which uses the selection as a mask index) keeps the enlarged
# head: V in Present mode cycles encoder → decoder → cross → masks, and a lecturer following one
# head through the views got layer 1, head 1 after the Masks view instead.


def test_view_model_restores_the_head_after_masks():
    vm = ViewModel()
    vm.set_kind("cross")
    vm.select(1, 2)
    vm.set_kind("masks")
    assert vm.selected == (0, 0)  # the first mask
    vm.select(2, 0)  # the third mask
    vm.set_kind("encoder")
    assert vm.selected == (1, 2)
    vm.set_kind("decoder")
    vm.select(0, 3)
    vm.set_kind("masks")
    vm.set_kind("masks")  # choosing Masks again changes nothing remembered
    vm.set_kind("cross")
    assert vm.selected == (0, 3)


def test_present_v_keeps_the_head_through_masks(qtbot, window):
    type_and_translate(qtbot, window)
    window.set_view("cross")
    window.select(1, 2)
    toggle_present(window)
    pw = window.present_window
    titles = []
    for _ in range(4):  # cross → masks → encoder → decoder → cross
        qtbot.keyClick(pw, QtCore.Qt.Key.Key_V)
        titles.append(pw.heatmap.plot.titleLabel.text)
    assert titles[0].startswith("decoder self mask given")
    assert [t.split(" — ")[-1] for t in titles[1:]] == ["layer 2 / 2, head 3 / 4"] * 3, titles
    assert titles[3].startswith("Cross-attention") and window.vm.selected == (1, 2)
    pw.close()


def _ink_rows(axis, rect: QtCore.QRectF, text: str) -> tuple[float, float]:
    """Top and bottom (px, axis coordinates) of the ink of one row label drawn as the axis draws it."""
    bounds = axis.boundingRect()
    img = QtGui.QImage(int(bounds.width()) + 1, int(bounds.height()) + 1, QtGui.QImage.Format.Format_RGB32)
    img.fill(QtGui.QColor("white"))
    p = QtGui.QPainter(img)
    p.translate(-bounds.left(), -bounds.top())
    p.setFont(axis._font())
    p.setPen(QtGui.QColor("black"))
    align = QtCore.Qt.AlignmentFlag
    p.drawText(rect, int(align.AlignRight | align.AlignVCenter), text)
    p.end()
    rows = np.flatnonzero(rgba_of(img)[..., :3].min(axis=-1).min(axis=1) < 200)
    return rows[0] + bounds.top(), rows[-1] + 1 + bounds.top()


def test_present_mode_row_labels_sit_in_their_own_rows_at_720p(qtbot):
    """'I'm …' at 1280 x 720 in Present mode: "▁I" over "'" read as one label, the apostrophe hung
    at the top of its row right under the I. Every row is named, each label's ink is centred on its
    row (within 1.5 px) and stays inside the row, so neighbours never touch."""
    from tests.support import shipped

    win = open_window(qtbot, shipped(), size=(1280, 720))
    try:
        type_and_translate(qtbot, win, "나는 학생이고 매일 아침 일찍 학교에 갑니다.")
        tokens = [s.token for s in win.result.steps]
        assert tokens[:3] == ["▁I", "'", "m"] and len(tokens) >= 12  # the case under test
        win.set_view("cross")
        toggle_present(win)
        pw = win.present_window
        pw.showNormal()
        pw.resize(1280, 720)
        for _ in range(3):
            pw.heatmap.grab()
            qtbot.wait(30)
        left = pw.heatmap.plot.getAxis("left")
        view = left.linkedView()
        ticks = {i: left.mapFromScene(view.mapViewToScene(QtCore.QPointF(0, v))).y() for i, (v, _t) in enumerate(left.tokens())}
        assert sorted(i for _, _, i in left.drawn) == list(
            range(len(tokens))
        )  # every row named: [BOS] and all but the last token
        pitch = abs(ticks[1] - ticks[0])
        ink = {i: _ink_rows(left, rect, text) for rect, text, i in left.drawn}
        for i, (top, bottom) in ink.items():
            assert abs((top + bottom) / 2 - ticks[i]) <= 1.5, (i, top, bottom, ticks[i])
            assert ticks[i] - pitch / 2 <= top and bottom <= ticks[i] + pitch / 2  # inside its own row
        above, below = sorted((ink[1], ink[2]))  # "▁I" and "'"
        assert below[0] - above[1] >= pitch / 3  # a third of a row of clear space between them
        pw.close()
    finally:
        win.close()
