"""Presenter-grade display: what each drawn pixel means, and that labels stay legible.

Thumbnails max-pool; the enlarged map's title matches the head it shows; labels never overlap."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest

from gui.widgets.downsample import all_pool, max_pool
from gui.widgets.head_grid import Cell, HeadGrid


def test_max_pool_keeps_every_peak_and_fits():
    rng = np.random.default_rng(0)
    m = rng.random((13, 200)).astype(np.float32) * 0.1
    for col in (0, 57, 199):
        m[3, col] = 1.0
        p = max_pool(m, 13, 70)
        assert p.shape == (13, 70) and p.max() == 1.0
        m[3, col] = 0.0
    p = max_pool(m, 5, 70)
    # independent check: each output pixel is the max of its contiguous bin
    starts_c = (np.arange(70) * 200) // 70
    ends_c = list(starts_c[1:]) + [200]
    starts_r = (np.arange(5) * 13) // 5
    ends_r = list(starts_r[1:]) + [13]
    for i, (r0, r1) in enumerate(zip(starts_r, ends_r)):
        for j, (c0, c1) in enumerate(zip(starts_c, ends_c)):
            assert p[i, j] == m[r0:r1, c0:c1].max()
    assert max_pool(m, 100, 300) is m or np.array_equal(max_pool(m, 100, 300), m)
    mask = np.zeros((2, 4), dtype=bool)
    mask[:, 2:] = True
    mask[0, 1] = True
    assert all_pool(mask, 2, 2).tolist() == [[False, True], [False, True]]
    with pytest.raises(ValueError):
        max_pool(m, 0, 3)


def test_one_hot_columns_survive_in_every_thumbnail(qtbot):
    """200 keys, one-hot heads (each head's hot column elsewhere), thumbnails ~70 px wide."""
    grid = HeadGrid(pg.colormap.get("viridis"))
    qtbot.addWidget(grid)
    grid.resize(640, 300)
    grid.show()
    cells = []
    for h in range(8):
        m = np.zeros((6, 200), dtype=np.float32)
        m[:, 13 + 23 * h] = 1.0  # every query looks at one key
        cells.append(Cell(f"L1 H{h + 1}", m, None, (0, h)))
    grid.set_cells(cells, 8)
    qtbot.waitUntil(lambda: all(s[1] < 200 for s in grid.pooled), timeout=5000)
    for im, (rows, cols) in zip(grid.images, grid.pooled):
        img = im.image.image
        assert img.shape == (rows, cols) and cols < 200
        assert (img.max(axis=1) == 1.0).all()  # the hot column is visible on every row
    assert "maximum" in grid.note.text and "downsampled" in grid.note.text


LONG_SRC = (["▁우리는"] + [f"▁토큰{i}" for i in range(35)] + ["'", "[EOS]"])  # 38 source tokens
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

    src, tgt = LONG_SRC[:n_src - 1] + ["'"], LONG_TGT[:n_tgt]
    hm = Heatmap(pg.colormap.get("viridis"))
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
        if len(tokens) <= 5:
            assert idx == list(range(len(tokens)))  # short sentences: every label
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
    masks = {"decoder_self": np.zeros((t, t), bool), "decoder_self_given": np.zeros(t, bool), "decoder_keys": tril,
             "cross": np.zeros((t, s), bool), "cross_given": np.ones(t, bool), "encoder": np.zeros(s, bool),
             "encoder_given": np.bool_(False), "src_key_padding": np.zeros(s, bool),
             "tgt_key_padding": np.zeros(t, bool), "recorded": np.bool_(True)}
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


def test_empty_maps_with_many_keys_are_not_pooled(qtbot):
    """Step 0 of the decoder: no query rows yet, 200 keys — nothing to pool, no error."""
    grid = HeadGrid(pg.colormap.get("viridis"))
    qtbot.addWidget(grid)
    grid.resize(300, 200)
    grid.show()
    qtbot.wait(20)
    mask = np.zeros((0, 200), dtype=bool)
    grid.set_cells([Cell("L1 H1", np.zeros((0, 200), np.float32), mask, (0, 0))], 1)
    assert grid.pooled == [(0, 200)] and grid.note.text == ""
