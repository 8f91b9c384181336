"""Labels stay legible and ticks read the values themselves: heatmap and mask-panel labels never
overlap (first and last kept), colour-bar and strip ticks are the values, cell values sit in their
own cells, labels at 45 degrees stay inside their axis item."""

from __future__ import annotations

import os

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtGui, QtWidgets

from gui.panels.pair_views import DiffHeatmap
from gui.widgets.colormap import Colormap
from gui.widgets.heatmap import Heatmap
from gui.widgets.strips import ValueStrip
from tests.support.gui import tick_specs

LONG_SRC = ["▁우리는"] + [f"▁토큰{i}" for i in range(35)] + ["'", "[EOS]"]  # 38 source tokens


LONG_TGT = ["[BOS]"] + [f"▁word{i}longlonglong" for i in range(28)] + ["'"]


def drawn_rects(axis):
    """Scene rectangles of the tick labels an axis drew, with their token index."""
    return [(axis.mapRectToScene(rect), i) for rect, _, i in axis.drawn]


def assert_no_overlap(rects):
    for a in range(len(rects)):
        for b in range(a + 1, len(rects)):
            ra, rb = rects[a][0], rects[b][0]
            assert not ra.intersects(rb), f"labels {rects[a][1]} and {rects[b][1]} overlap: {ra} {rb}"


@pytest.mark.parametrize("point", [9, 16, 22])
@pytest.mark.parametrize("n_src,n_tgt", [(5, 3), (38, 30)])
def test_heatmap_labels_never_overlap_and_keep_first_and_last(qtbot, point, n_src, n_tgt):
    from PySide6 import QtCore, QtGui

    from gui.widgets.heatmap import Heatmap

    src, tgt = LONG_SRC[: n_src - 1] + ["'"], LONG_TGT[:n_tgt]
    hm = Heatmap(Colormap.named("viridis"))
    qtbot.addWidget(hm)
    hm.resize(560, 460)
    hm.show()
    font = QtGui.QFont()
    font.setPointSize(point)
    hm.set_font(font)
    rng = np.random.default_rng(0)
    hm.set_matrix(rng.random((n_tgt, n_src)).astype(np.float32), None, tgt, src, "title", "target query", "source key")
    for _ in range(3):
        hm.grab()  # paint: the axes lay out their labels while drawing
        qtbot.wait(30)  # and the layout follows their new sizes
    left, bottom = hm.plot.getAxis("left"), hm.plot.getAxis("bottom")
    rects = drawn_rects(left) + drawn_rects(bottom)
    assert_no_overlap(rects)
    for axis, tokens in ((left, tgt), (bottom, src)):
        idx = [i for _, _, i in axis.drawn]
        assert idx and idx[0] == 0  # the first label is never dropped (it used to be: 우리는)
        if len(tokens) <= 5 and not (axis is bottom and point == 22):
            assert idx == list(range(len(tokens)))  # short sentences: every label
        elif len(tokens) <= 5:  # 12-character labels at 22 pt in 560 px: at ≤ 45° (never sideways) some
            assert idx[-1] == len(tokens) - 1 and len(set(np.diff(idx))) == 1  # thin evenly, keep the last
            assert bottom.angled or bottom.staggered
            if axis is bottom:
                assert [t for _, t, _ in axis.drawn][-1] == "'"  # the apostrophe token is itself, not '''
        bounds = axis.mapRectToScene(axis.boundingRect())
        for r, _ in drawn_rects(axis):  # inside the axis: never cut at the widget's edge
            assert r.left() >= bounds.left() - 1 and r.right() <= bounds.right() + 1
    assert max(r.width() for r, _ in drawn_rects(bottom)) < 0.5 * hm.width()  # long tokens are elided
    for axis, tokens in ((left, tgt), (bottom, src)):  # hovering a label gives the full token
        for rect, text, i in axis.drawn:
            tick = axis.mapFromScene(hm.view.mapViewToScene(QtCore.QPointF(i + 0.5, i + 0.5)))
            at = QtCore.QPointF(rect.center().x(), tick.y()) if axis is left else QtCore.QPointF(tick.x(), rect.center().y())
            assert axis.token_at(at) == tokens[i], (text, tokens[i])
    if n_src == 38:
        assert len(bottom.drawn) < 38  # thinned


def test_mask_panel_labels_never_overlap_and_do_not_collapse(qtbot):
    from PySide6 import QtGui

    from gui.widgets.mask_panel import MaskPanel

    panel = MaskPanel()
    qtbot.addWidget(panel)
    panel.resize(480, 200)  # too small on purpose: it scrolls
    panel.show()
    font = QtGui.QFont()
    font.setPointSize(22)
    panel.set_font(font)
    t, s = 30, 38
    tril = np.tril(np.ones((t, t), bool))
    masks = {
        "decoder_self": np.zeros((t, t), bool),
        "decoder_self_given": np.zeros(t, bool),
        "decoder_keys": tril,
        "cross": np.zeros((t, s), bool),
        "cross_given": np.ones(t, bool),
        "encoder": np.zeros(s, bool),
        "encoder_given": np.bool_(False),
        "src_key_padding": np.zeros(s, bool),
        "tgt_key_padding": np.zeros(t, bool),
        "recorded": np.bool_(True),
    }
    panel.set_masks(masks, LONG_SRC, LONG_TGT[:t])
    line = QtGui.QFontMetrics(font).height()
    for v in panel.views():
        v.grab()
        qtbot.wait(30)
        v.grab()
        assert v.height() >= 3.5 * line  # a readable minimum, never a strip
        assert_no_overlap(drawn_rects(v.getAxis("left")) + drawn_rects(v.getAxis("bottom")))
    assert panel.verticalScrollBar().maximum() > 0  # it scrolls instead of collapsing
    assert not panel.decoder_self.mask.any() and panel.decoder_self.present.tolist() == tril.tolist()
    assert "no self-attention mask" in panel.note.text()


# --- Colour-bar and strip tick labels read the values themselves: pyqtgraph's automatic SI prefix
# (which turns a bar up to 0.02 into 10 … 20 with a small "(x0.001)" once the bar's label is shown)
# is off. The strings checked are the ones the axis would paint (``generateDrawSpecs``).


def painted_ticks(axis) -> list[str]:
    """The tick texts ``axis`` draws now (after the window has laid it out)."""
    return [t for _, t in tick_specs(axis)]


def numbers(texts: list[str]) -> np.ndarray:
    return np.array([float(t.replace("−", "-")) for t in texts])


def shown(qtbot, widget) -> None:
    widget.resize(520, 420)
    widget.show()
    qtbot.waitExposed(widget)
    QtWidgets.QApplication.processEvents()


def test_per_map_colour_bar_ticks_are_the_values(qtbot):
    h = Heatmap(Colormap.named("viridis"))
    qtbot.addWidget(h)
    h.set_font(QtGui.QFont())
    h.set_scale("per-map")
    shown(qtbot, h)
    # the first map shows the bar's label; from the second on pyqtgraph would rescale small ranges
    for lo, hi in ((0.2, 0.3), (0.01, 0.02), (0.0122, 0.0128), (0.2, 0.9)):
        h.set_matrix(np.linspace(lo, hi, 12).reshape(3, 4), None, list("abc"), list("defg"))
        QtWidgets.QApplication.processEvents()
        texts = painted_ticks(h.colorbar.axis)
        assert len(texts) >= 2, (lo, hi, texts)
        v = numbers(texts)
        assert (v >= lo - 1e-12).all() and (v <= hi + 1e-12).all(), (lo, hi, texts)
        assert "(x" not in h.colorbar.axis.labelString()


def test_difference_colour_bar_ticks_are_the_values(qtbot):
    d = DiffHeatmap()
    qtbot.addWidget(d)
    d.set_font(QtGui.QFont())
    shown(qtbot, d)
    for m in (0.99, 0.05):
        d.set_matrix(np.linspace(-m, m, 12).reshape(3, 4), None, list("abc"), list("defg"))
        QtWidgets.QApplication.processEvents()
        v = numbers(painted_ticks(d.colorbar.axis))
        assert v.size >= 2 and np.abs(v).max() <= m + 1e-12 and np.abs(v).max() >= m / 4


def cell_pixels(h: Heatmap, image: QtGui.QImage, r: int, c: int) -> np.ndarray:
    """``[n, 3]`` RGB of the pixels inside cell (r, c) of ``h``'s map in a grab of the widget."""
    top_left = h.view.mapViewToScene(pg.Point(c, r))
    bottom_right = h.view.mapViewToScene(pg.Point(c + 1, r + 1))
    ratio = image.devicePixelRatio()
    x0, y0 = int(top_left.x() * ratio) + 2, int(top_left.y() * ratio) + 2
    x1, y1 = int(bottom_right.x() * ratio) - 2, int(bottom_right.y() * ratio) - 2
    image = image.convertToFormat(QtGui.QImage.Format.Format_RGB888)
    rows = [
        np.frombuffer(image.constScanLine(y), dtype=np.uint8, count=image.width() * 3).reshape(-1, 3)[x0:x1]
        for y in range(y0, y1)
    ]
    return np.concatenate(rows)


def test_cell_values_are_drawn_in_their_own_cells(qtbot):
    """Each value is printed inside its own cell (not transposed): dark text on the bright cells,
    light text on the dark ones, masked cells "–"; one graphics item holds them all."""
    h = Heatmap(Colormap.named("viridis"))
    qtbot.addWidget(h)
    h.set_font(QtGui.QFont())
    shown(qtbot, h)
    h.resize(700, 500)
    m = np.array([[0.95, 0.02, 0.03], [0.01, 0.02, 0.97]])
    mask = np.array([[False, False, True], [False, False, False]])
    h.set_matrix(m, mask, list("ab"), list("cde"))
    QtWidgets.QApplication.processEvents()
    assert h.values.shown() == [".95", ".02", "–", ".01", ".02", ".97"]
    assert h.values.dark.tolist() == [[True, False, True], [False, False, True]]
    image = h.grab().toImage()
    if os.environ.get("SAVE_CELL_VALUES"):
        image.save(os.environ["SAVE_CELL_VALUES"])
    for r in range(2):
        for c in range(3):
            px = cell_pixels(h, image, r, c).astype(int)
            near_dark = (np.abs(px - 0x11).max(axis=1) < 40).sum()
            near_light = (np.abs(px - 0xF5).max(axis=1) < 30).sum()
            if mask[r, c]:  # a short dash on the grey hatch
                assert near_dark > 0, (r, c, near_dark)
            elif h.values.dark[r, c]:
                assert near_dark > 10, (r, c, near_dark)
            elif not mask[r, c]:
                assert near_light > 3, (r, c, near_light)
    h.set_show_values(False)
    assert h.values.shown() == []
    empty = h.grab().toImage()
    assert (np.abs(cell_pixels(h, empty, 0, 1).astype(int) - 0xF5).max(axis=1) < 30).sum() == 0


def test_inside_strip_ticks_are_the_tokens_for_small_values(qtbot):
    layout = pg.GraphicsLayoutWidget()
    qtbot.addWidget(layout)
    strip = ValueStrip(layout.ci, 0, Colormap.named("viridis"), diverging=True)
    shown(qtbot, layout)
    keys = ["집", "에", "누군가", "</s>"]
    for scale in (1.0, 1e-3):  # twice: a second draw is where a hidden prefix would appear
        strip.set(np.array([[0.4, -0.2, 0.1, 0.3]]) * scale, ["q"], keys, "scores")
        QtWidgets.QApplication.processEvents()
        assert painted_ticks(strip.plot.getAxis("bottom")) == keys
        assert painted_ticks(strip.plot.getAxis("left")) == ["q"]
        for name in ("left", "bottom"):
            assert "(x" not in strip.plot.getAxis(name).labelString()


def test_labels_at_45_degrees_are_inside_the_axis_item(qtbot):
    """Angled labels end at their tick and rise to the left: the first one's ink reaches left of
    the axis itself, and Qt repaints an item only inside its bounding rect (it cut "[BOS]" to "OS]")."""
    from PySide6 import QtCore, QtGui

    from gui.widgets.heatmap import Heatmap

    src = ["[BOS]"] + [f"▁token{i:02d}" for i in range(30)]
    hm = Heatmap(Colormap.named("viridis"))
    qtbot.addWidget(hm)
    hm.resize(700, 460)
    hm.show()
    font = QtGui.QFont()
    font.setPointSize(20)
    hm.set_font(font)
    hm.set_matrix(np.full((3, len(src)), 0.5, np.float32), None, ["a", "b", "c"], src, "title")
    for _ in range(3):
        hm.grab()
        qtbot.wait(30)
    bottom = hm.plot.getAxis("bottom")
    assert bottom.angled and bottom.drawn[0][2] == 0
    fm = QtGui.QFontMetricsF(bottom._font())
    bounds = bottom.boundingRect().adjusted(-1, -1, 1, 1)
    for rect, text, _ in bottom.drawn:  # as drawPicture draws them: right-aligned, turned −45° about the tick
        w = fm.horizontalAdvance(text) + 2
        turn = QtGui.QTransform().translate(rect.center().x(), rect.top()).rotate(-45)
        ink = turn.mapRect(QtCore.QRectF(-w, 0, w, rect.height()))
        assert bounds.contains(ink), (text, ink, bounds)


@pytest.mark.parametrize("text", ["[BOS]", "▁I", "'", "▁학교에"])
def test_a_label_ink_centre_is_measured_whole_in_a_row_lower_than_its_font(qapp, text):
    """Drawn vertically centred, a label moves down by half of what its box grows: the measured ink
    centre minus half the box is the same in a box far lower than the font's line (a tight row,
    where "[BOS]"'s brackets reach past the box) as in a roomy one."""
    from gui.app import register_fonts
    from gui.widgets.labels import ink_centre

    font = QtGui.QFont(register_fonts())  # the app's font (NanumGothic: Hangul too)
    font.setPixelSize(24)
    tight, roomy = 10, 60
    assert QtGui.QFontMetricsF(font).height() > tight
    assert abs((ink_centre(font, text, tight) - tight / 2) - (ink_centre(font, text, roomy) - roomy / 2)) <= 1.0
