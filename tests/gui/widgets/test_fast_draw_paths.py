"""The fast drawing paths of the per-step views draw what the plain pyqtgraph paths draw: token
labels where ``TokenAxis.drawn`` says, thumbnail and mask colours pixel for pixel, thumbnails in
their view's unit square whatever the map's shape."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from gui.state.view_spec import Cell
from gui.widgets.colormap import Colormap
from gui.widgets.colour_scale import LUT_POINTS
from gui.widgets.downsample import max_pool
from gui.widgets.head_grid import HeadGrid
from gui.widgets.heatmap import Heatmap
from gui.widgets.mask_panel import MaskView, OpaqueImage, mask_rgba
from gui.widgets.thumbnails import UnitImage, colour_stack
from gui.widgets.topk_panel import TopKPanel


def rgba_of(image: QtGui.QImage) -> np.ndarray:
    q = image.convertToFormat(QtGui.QImage.Format.Format_RGBA8888)
    h, w = q.height(), q.width()
    return np.frombuffer(q.constBits(), np.uint8).reshape(h, q.bytesPerLine())[:, : w * 4].reshape(h, w, 4).copy()


def test_colour_stack_bgra_is_rgba_with_red_and_blue_swapped(qapp):
    lut = pg.colormap.get("viridis").getLookupTable(nPts=LUT_POINTS)
    stack = np.random.default_rng(3).random((4, 6, 9)).astype(np.float32)
    rgba = colour_stack(stack, (0.0, 1.0), lut)
    bgra = colour_stack(stack, (0.0, 1.0), lut, bgra=True)
    np.testing.assert_array_equal(bgra, rgba[..., [2, 1, 0, 3]])
    np.testing.assert_array_equal(rgba[..., :3], lut[np.clip((stack * LUT_POINTS).astype(int), 0, LUT_POINTS - 1)])


def test_unit_image_keeps_its_bounds_as_the_map_grows(qapp):
    item = UnitImage()
    assert item.boundingRect().isEmpty()  # nothing to draw yet
    for rows in (3, 4, 40):
        item.setImage(np.zeros((rows, 7), np.float32), levels=(0, 1), autoLevels=False)
        assert item.boundingRect() == QtCore.QRectF(0, 0, 1, 1) and item.transform().isIdentity()
        assert item.image.shape == (rows, 7)
    item.setRect(QtCore.QRectF(0, 0, 1, 1))  # its own square: accepted
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        item.setRect(QtCore.QRectF(0, 0, 7, 40))


def test_grid_thumbnails_are_rgb32_and_fill_their_views(qtbot):
    """Each thumbnail is drawn as RGB32 over exactly its view's area: the grid's screen pixels in
    the middle of cell (r, c) of a thumbnail are that cell's colour."""
    grid = HeadGrid(Colormap.named("viridis"))
    qtbot.addWidget(grid)
    grid.resize(500, 400)
    grid.show()
    rng = np.random.default_rng(5)
    mats = [rng.random((3, 4)).astype(np.float32) for _ in range(4)]
    grid.set_cells([Cell(f"L1 H{i + 1}", m, None, (0, i)) for i, m in enumerate(mats)], 2)
    qtbot.waitUntil(lambda: grid.views[0].width() > 20)
    shot = rgba_of(grid.grab().toImage())
    ratio = grid.devicePixelRatioF()
    for im, view, m in zip(grid.images, grid.views, mats):
        item = im.image
        item.render()
        assert item.qimage.format() == QtGui.QImage.Format.Format_RGB32
        colours = colour_stack(m[None], (0.0, 1.0), item.lut)[0]  # pyqtgraph's arithmetic, RGBA
        np.testing.assert_array_equal(rgba_of(item.qimage), colours)
        rect = view.sceneBoundingRect()
        for r in range(3):
            for c in range(4):
                x = grid.mapFromScene(QtCore.QPointF(rect.left() + (c + 0.5) * rect.width() / 4, 0)).x()
                y = grid.mapFromScene(QtCore.QPointF(0, rect.top() + (r + 0.5) * rect.height() / 3)).y()
                np.testing.assert_array_equal(shot[int(y * ratio), int(x * ratio), :3], colours[r, c, :3])


def test_pooled_grid_checks_nan_and_shared_masks_per_cell(qtbot):
    """Heads pooled as one stack and sharing one mask: a head with a NaN is shown with 0 there
    (never NaN on screen), the others keep their pooled maxima; every head of the shared mask gets
    its hatch, and a head whose pooled mask masks nothing gets none."""
    grid = HeadGrid(Colormap.named("viridis"))
    qtbot.addWidget(grid)
    grid.resize(300, 200)
    grid.show()
    rng = np.random.default_rng(11)
    rows, cols = 6, 400  # more keys than a thumbnail has pixels: pooled
    mats = [rng.random((rows, cols)).astype(np.float32) for _ in range(4)]
    mats[2][1, 5] = np.nan
    causal = np.triu(np.ones((rows, cols), dtype=bool), 1)
    open_mask = np.zeros((rows, cols), dtype=bool)
    cells = [Cell(f"L1 H{i + 1}", m, causal if i < 3 else open_mask, (0, i)) for i, m in enumerate(mats)]
    grid.set_cells(cells, 2)
    qtbot.waitUntil(lambda: grid.views[0].width() > 20)
    grid.set_cells(cells, 2)  # now laid out: pooled to the thumbnails' pixels
    shown = [im.image.image for im in grid.images]
    assert shown[0].shape[1] < cols
    assert all(np.isfinite(s).all() for s in shown)
    pooled_nan = max_pool(mats[2], *shown[2].shape)
    assert np.isnan(pooled_nan).sum() == 1  # the NaN survives pooling: the grid must catch it
    np.testing.assert_array_equal(shown[2], np.nan_to_num(pooled_nan, nan=0.0))
    np.testing.assert_array_equal(shown[0], max_pool(mats[0], *shown[0].shape))
    assert [im.hatch is not None for im in grid.images] == [True, True, True, False]
    assert grid.images[0].hatch is grid.images[1].hatch  # one hatch array for the shared mask


def test_opaque_image_draws_mask_colours_exactly(qapp):
    img = np.array([[0, 1, np.nan], [1, np.nan, 0]], dtype=np.float32)
    rgba = mask_rgba(img)
    item = OpaqueImage(axisOrder="row-major")
    item.setImage(rgba, autoLevels=False)
    item.render()
    assert item.qimage.format() == QtGui.QImage.Format.Format_RGB32
    np.testing.assert_array_equal(rgba_of(item.qimage), rgba)
    see_through = rgba.copy()
    see_through[0, 0, 3] = 0  # not opaque: drawn as pyqtgraph draws it
    item.setImage(see_through, autoLevels=False)
    item.render()
    assert item.qimage.format() != QtGui.QImage.Format.Format_RGB32
    np.testing.assert_array_equal(rgba_of(item.qimage)[1], see_through[1])


def test_mask_view_keeps_an_unchanged_mask(qtbot):
    view = MaskView("mask")
    qtbot.addWidget(view)
    img = np.array([[0, 1, 1], [0, 0, 1]], dtype=np.float32)
    view.set_mask(img, ["a", "b"], ["x", "y", "z"])
    shown = view.image.image
    view.set_mask(img.copy(), ["a", "b"], ["x", "y", "z"])  # equal, not the same object
    assert view.image.image is shown
    view.set_mask(img, ["a", "c"], ["x", "y", "z"])  # a new row token: drawn again
    assert view.image.image is not shown
    np.testing.assert_array_equal(view.mask, img == 1)


def _ink(axis, draw) -> np.ndarray:
    """Dark pixels ``[h, w]`` of ``axis`` drawn by ``draw(painter)`` on white, in item coordinates."""
    bounds = axis.boundingRect()
    img = QtGui.QImage(int(bounds.width()) + 1, int(bounds.height()) + 1, QtGui.QImage.Format.Format_RGB32)
    img.fill(QtGui.QColor("white"))
    p = QtGui.QPainter(img)
    p.translate(-bounds.left(), -bounds.top())
    draw(p)
    p.end()
    return rgba_of(img)[..., :3].min(axis=-1) < 200  # text and lines (grey or black), not the white


def test_token_labels_are_drawn_as_pyqtgraph_draws_them(qtbot):
    """The cached glyphs land where pyqtgraph's ``drawText`` puts each label (ink overlap ≥ 90 %),
    and the axis keeps its layout when the same range is set or it is shown again."""
    view = MaskView("mask")
    qtbot.addWidget(view)
    view.resize(420, 360)
    font = QtGui.QFont()
    font.setPointSize(9)  # whatever the application's font is now: upright labels (at 45° they are not drawText's)
    view.set_font(font)
    view.show()
    tokens = [f"▁tok{i}" for i in range(12)]
    view.set_mask(np.zeros((12, 12), np.float32), tokens, tokens)
    qtbot.waitUntil(lambda: bool(view.getAxis("left").drawn))
    view.grab()  # painted: every axis laid out
    for name in ("left", "bottom"):
        axis = view.getAxis(name)
        assert len(axis.drawn) >= 4 and axis.picture is not None and not axis.angled
        axis.setRange(*axis.range)
        assert axis.picture is not None  # the same range again: the drawn layout is kept
        axis.show()
        assert axis.picture is not None  # shown again while shown: kept too
        fast = _ink(axis, lambda p, a=axis: a.paint(p, None, None))
        plain = _ink(axis, lambda p, a=axis: pg.AxisItem.drawPicture(a, p, *a.generateDrawSpecs(p)))
        assert plain.sum() > 100
        assert (fast & plain).sum() / (fast | plain).sum() >= 0.9


@pytest.mark.parametrize(
    "make",
    [lambda: Heatmap(Colormap.named("viridis")), TopKPanel, lambda: MaskView("m"), lambda: HeadGrid(Colormap.named("viridis"))],
)
def test_per_step_views_paint_their_background_directly(qtbot, make):
    view = make()
    qtbot.addWidget(view)
    assert view.cacheMode() == QtWidgets.QGraphicsView.CacheModeFlag.CacheNone
    plot = view.plot if isinstance(view, Heatmap) else getattr(view, "getPlotItem", lambda: None)()
    if plot is not None:
        assert not any(plot.getAxis(side).autoSIPrefix for side in ("left", "bottom", "right", "top"))


def test_wrap_title_measures_once_and_recovers_from_set_title(qtbot):
    """A title that fits is measured once per text (a plot area that changes width every step costs
    nothing); a long one wraps to the width; setTitle's fixed 30 px row is replaced again."""
    from gui.widgets.labels import wrap_title

    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    plot = widget.addPlot()
    plot.setTitle("short title", size="10pt")
    label = plot.titleLabel
    wrap_title(label, 400)
    one_line = label.maximumHeight()
    assert label.item.textWidth() == -1 and 0 < one_line != 30
    calls = []
    real = label.item.setTextWidth
    label.item.setTextWidth = lambda w: (calls.append(w), real(w))
    for width in (390, 380, 370):
        wrap_title(label, width)
    assert calls == []  # still fits: nothing laid out again
    label.item.setTextWidth = real
    plot.setTitle("short title", size="10pt")  # pyqtgraph: row and maximum height 30
    assert label.maximumHeight() == 30
    wrap_title(label, 400)
    assert label.maximumHeight() == one_line
    plot.setTitle("a much longer title that cannot fit in the narrow plot area at all", size="10pt")
    wrap_title(label, 120)
    assert label.item.textWidth() == 120 and label.maximumHeight() > 2 * one_line
    assert label.item.boundingRect().width() <= 121


def test_thumb_view_background_is_painted_without_a_python_paint(qapp):
    from gui.widgets.thumb_view import ThumbView

    scene = QtWidgets.QGraphicsScene()
    view = ThumbView()
    scene.addItem(view)
    view.resize(40, 20)
    view.setBackgroundColor((235, 235, 235))
    assert view.flags() & QtWidgets.QGraphicsItem.GraphicsItemFlag.ItemHasNoContents
    out = QtGui.QImage(40, 20, QtGui.QImage.Format.Format_ARGB32_Premultiplied)
    out.fill(0xFFFFFFFF)
    p = QtGui.QPainter(out)
    scene.render(p, QtCore.QRectF(0, 0, 40, 20), QtCore.QRectF(0, 0, 40, 20))
    p.end()
    assert (rgba_of(out)[..., :3] == 235).all()


def test_mask_view_cells_fill_the_view_and_ticks_sit_at_cell_centres(qtbot):
    """The mask view's range stays [0, 1]² as the mask grows: its image fills the whole plot area,
    each token's tick is at the centre of its row or column, and the pixel there has that cell's colour."""
    view = MaskView("mask")
    qtbot.addWidget(view)
    view.resize(400, 300)
    view.show()
    vb = view.getPlotItem().getViewBox()
    for rows in (2, 5):
        img = np.triu(np.ones((rows, 3), np.float32), 1)  # 1 = masked
        view.set_mask(img, [f"r{i}" for i in range(rows)], ["x", "y", "z"])
        qtbot.wait(10)
        assert vb.viewRange() == [[0.0, 1.0], [0.0, 1.0]]
        assert view.image.mapRectToView(view.image.boundingRect()) == QtCore.QRectF(0, 0, 1, 1)
        assert [p for p, _ in view.getAxis("left").tokens()] == [(i + 0.5) / rows for i in range(rows)]
        shot = rgba_of(view.grab().toImage())
        ratio = view.devicePixelRatioF()
        for r in range(rows):
            for c in range(3):
                centre = view.mapFromScene(vb.mapViewToScene(QtCore.QPointF((c + 0.5) / 3, (r + 0.5) / rows)))
                pixel = shot[int(centre.y() * ratio), int(centre.x() * ratio), :3]
                want = mask_rgba(img)[r * (mask_rgba(img).shape[0] // rows) + 1, c * (mask_rgba(img).shape[1] // 3) + 1, :3]
                assert (np.abs(pixel.astype(int) - want) <= 40).all(), (rows, r, c, pixel, want)


def test_a_constant_map_under_the_per_map_scale_is_drawn_in_the_top_colour(qapp):
    from gui.widgets.colour_scale import map_levels

    m = np.full((3, 4), 0.25)
    mask = np.zeros((3, 4), dtype=bool)
    mask[:, 2:] = True  # masked cells do not count
    m[:, 2:] = 0.0
    lo, hi = map_levels(m, mask, "per-map")
    assert hi == 0.25 and lo < hi
    lut = pg.colormap.get("viridis").getLookupTable(nPts=LUT_POINTS, alpha=False)
    colours = colour_stack(m[None, :, :2], (lo, hi), lut)[0]
    assert (colours[..., :3] == lut[-1][:3]).all()  # the top colour, not the colour of 0
    lo, hi = map_levels(np.array([[0.2, 0.6]]), None, "per-map")
    assert (lo, hi) == (0.2, 0.6)
