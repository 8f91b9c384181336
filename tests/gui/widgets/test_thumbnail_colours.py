"""Thumbnails coloured in one pass show exactly the colours pyqtgraph computes for each map alone."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtGui

from gui.state.view_spec import Cell
from gui.widgets.colormap import Colormap
from gui.widgets.colour_scale import LUT_POINTS
from gui.widgets.head_grid import HeadGrid
from gui.widgets.thumbnails import ThumbnailImage, colour_stack, colour_thumbnails


def rgba_of(image: QtGui.QImage) -> np.ndarray:
    q = image.convertToFormat(QtGui.QImage.Format.Format_RGBA8888)
    h, w = q.height(), q.width()
    return np.frombuffer(q.constBits(), np.uint8).reshape(h, q.bytesPerLine())[:, : w * 4].reshape(h, w, 4).copy()


def pixels(item: pg.ImageItem) -> np.ndarray:
    """``[rows, cols, 4]`` RGBA of the item's rendered QImage (rendering it first)."""
    item.render()
    return rgba_of(item.qimage)


def plain(image: np.ndarray, levels, lut) -> np.ndarray:
    """What pyqtgraph itself draws for ``image`` at ``levels`` through ``lut``."""
    item = pg.ImageItem(axisOrder="row-major")
    item.setLookupTable(lut)
    item.setImage(image, levels=levels, autoLevels=False)
    return pixels(item)


@pytest.mark.parametrize("levels", [(0.0, 1.0), (0.013, 0.4), (-0.25, 0.25)])
def test_colour_stack_equals_pyqtgraph(qapp, levels):
    rng = np.random.default_rng(1)
    lut = pg.colormap.get("viridis").getLookupTable(nPts=LUT_POINTS)
    stack = rng.random((5, 7, 11)).astype(np.float32) * 1.2 - 0.1  # some below and above the levels
    stack[0, 0, :4] = [levels[0], levels[1], np.nextafter(np.float32(levels[1]), np.float32(0)), 0.5]
    rgba = colour_stack(stack, levels, lut)
    assert rgba.shape == (5, 7, 11, 4) and rgba.dtype == np.uint8 and (rgba[..., 3] == 255).all()
    for m, colours in zip(stack, rgba):
        np.testing.assert_array_equal(colours, plain(m, levels, lut))
    # the extremes take the table's ends
    np.testing.assert_array_equal(rgba[0, 0, 0, :3], lut[0])
    np.testing.assert_array_equal(rgba[0, 0, 1, :3], lut[-1])


def test_colour_stack_rejects_what_is_not_a_colour_table():
    with pytest.raises(ValueError, match="colour table"):
        colour_stack(np.zeros((1, 2, 2), np.float32), (0, 1), np.zeros((256, 3), np.float32))
    with pytest.raises(ValueError, match="colour table"):
        colour_stack(np.zeros((1, 2, 2), np.float32), (0, 1), np.zeros((256, 2), np.uint8))


@pytest.mark.parametrize("levels", [(0.0, 1.0), (0.013, 0.4)])
def test_small_tables_colour_as_pyqtgraphs_indexed_image(qapp, levels):
    """A 256-entry table (what a colour bar gives its image): pyqtgraph draws an indexed image;
    colour_stack gives the same colours, and MapImage draws them as RGB32."""
    from gui.widgets.thumbnails import MapImage

    lut = pg.colormap.get("viridis").getLookupTable(nPts=256)
    rng = np.random.default_rng(3)
    m = rng.random((9, 13)).astype(np.float32) * 1.2 - 0.1
    m[0, :3] = [levels[0], levels[1], 0.5]
    reference = pg.ImageItem(axisOrder="row-major")
    reference.setLookupTable(lut)
    reference.setImage(m, levels=levels, autoLevels=False)
    reference.render()
    assert reference.qimage.format() == QtGui.QImage.Format.Format_Indexed8
    np.testing.assert_array_equal(colour_stack(m[None], levels, lut)[0], pixels(reference))
    item = MapImage()
    item.setLookupTable(lut)
    item.setImage(m, levels=levels, autoLevels=False)
    item.render()
    assert item.qimage.format() == QtGui.QImage.Format.Format_RGB32
    np.testing.assert_array_equal(pixels(item), pixels(reference))
    item.setLevels((0.2, 0.6))  # a new colour scale: coloured again at the next render
    reference.setLevels((0.2, 0.6))
    np.testing.assert_array_equal(pixels(item), pixels(reference))


def test_thumbnail_drops_its_colours_when_anything_changes(qapp):
    lut = pg.colormap.get("viridis").getLookupTable(nPts=LUT_POINTS)
    m = np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4)
    item = ThumbnailImage()
    item.setLookupTable(lut)
    item.setImage(m, levels=(0, 1), autoLevels=False)
    colour_thumbnails([item])
    assert item._colours is not None
    np.testing.assert_array_equal(pixels(item), plain(m, (0, 1), lut))
    item.setLevels((0.2, 0.6))  # new levels: colours dropped, the item colours itself
    assert item._colours is None
    np.testing.assert_array_equal(pixels(item), plain(m, (0.2, 0.6), lut))
    colour_thumbnails([item])
    inferno = pg.colormap.get("inferno").getLookupTable(nPts=LUT_POINTS)
    item.setLookupTable(inferno)
    assert item._colours is None
    np.testing.assert_array_equal(pixels(item), plain(m, (0.2, 0.6), inferno))
    with pytest.raises(ValueError, match="shape"):
        item.set_colours(np.zeros((2, 2, 4), np.uint8))


def test_grid_thumbnails_show_what_pyqtgraph_would(qtbot):
    """A 2 × 3 grid with a masked key column: every thumbnail holds its weights and shows
    pyqtgraph's colours for them, whether the scale is fixed or per map."""
    grid = HeadGrid(Colormap.named("cividis"))
    qtbot.addWidget(grid)
    grid.resize(600, 400)
    grid.show()
    rng = np.random.default_rng(2)
    mask = np.zeros((5, 6), dtype=bool)
    mask[:, 5] = True
    mats = [rng.random((5, 6)).astype(np.float32) * (i + 1) / 6 for i in range(6)]
    cells = [Cell(f"L{i // 3 + 1} H{i % 3 + 1}", m, mask, (i // 3, i % 3)) for i, m in enumerate(mats)]
    for scale in ("fixed", "per-map"):
        grid.set_scale(scale)
        grid.set_cells(cells, 3)
        for im, m in zip(grid.images, mats):
            item = im.image
            assert isinstance(item, ThumbnailImage) and item._colours is not None
            np.testing.assert_array_equal(item.image, m)  # the weights themselves
            np.testing.assert_array_equal(pixels(item), plain(item.image, tuple(item.levels), item.lut))


def test_thumbnails_share_one_hatch_conversion_with_pyqtgraphs_pixels(qapp):
    """Thumbnails showing one hatch array convert it to a QImage once, with exactly the pixels
    pyqtgraph draws for it; a new array (the next step's mask) is converted again."""
    from gui.widgets.map_style import mask_overlay
    from gui.widgets.thumbnails import shared_hatch

    mask = np.triu(np.ones((6, 6), dtype=bool), 1)  # a causal mask: True = masked
    pattern = mask_overlay(mask, (30, 30))
    reference = pg.ImageItem(axisOrder="row-major")
    reference.setImage(pattern, autoLevels=False)
    q = shared_hatch(pattern)
    np.testing.assert_array_equal(rgba_of(q), pixels(reference))
    assert shared_hatch(pattern) is q  # one conversion for every thumbnail
    grown = mask_overlay(np.triu(np.ones((7, 7), dtype=bool), 1), (30, 30))
    reference.setImage(grown, autoLevels=False)
    assert shared_hatch(grown) is not q
    np.testing.assert_array_equal(rgba_of(shared_hatch(grown)), pixels(reference))


def test_thumbnail_draws_its_hatch_over_its_colours(qapp):
    """A thumbnail with a hatch paints pyqtgraph's map and, over it, pyqtgraph's hatch: the pixels of
    two pyqtgraph items (map, then overlay) drawn into the same square."""
    from gui.widgets.map_style import mask_overlay
    from gui.widgets.thumbnails import UNIT

    lut = pg.colormap.get("viridis").getLookupTable(nPts=LUT_POINTS)
    m = np.random.default_rng(4).random((6, 6)).astype(np.float32)
    hatch = mask_overlay(np.triu(np.ones((6, 6), dtype=bool), 1), (24, 24))
    item = ThumbnailImage()
    item.setLookupTable(lut)
    item.setImage(m, levels=(0.0, 1.0), autoLevels=False)
    item.set_hatch(hatch)
    reference = [pg.ImageItem(axisOrder="row-major"), pg.ImageItem(axisOrder="row-major")]
    reference[0].setLookupTable(lut)
    reference[0].setImage(m, levels=(0.0, 1.0), autoLevels=False)
    reference[1].setImage(hatch, autoLevels=False)

    def drawn(paint) -> np.ndarray:
        out = QtGui.QImage(24, 24, QtGui.QImage.Format.Format_ARGB32_Premultiplied)
        out.fill(0xFFFFFFFF)
        p = QtGui.QPainter(out)
        p.scale(24, 24)
        paint(p)
        p.end()
        return rgba_of(out)

    def plain_paint(p):
        for r in reference:
            r.render()
            p.drawImage(UNIT, r.qimage)

    ours = drawn(lambda p: item.paint(p, None, None))
    np.testing.assert_array_equal(ours, drawn(plain_paint))
    assert (ours[..., :3] == (120, 120, 120)).all(axis=-1).any()  # hatch stripes are drawn
    item.set_hatch(None)
    assert not (drawn(lambda p: item.paint(p, None, None))[..., :3] == (120, 120, 120)).all(axis=-1).any()


def test_hatch_image_draws_pyqtgraphs_pixels_premultiplied(qapp):
    """The enlarged map's hatch is drawn as premultiplied ARGB32 with exactly pyqtgraph's pixels;
    an RGBA image with partial alpha (not a hatch) is left to pyqtgraph."""
    from gui.widgets.map_style import mask_overlay
    from gui.widgets.thumbnails import HatchImage

    mask = np.zeros((5, 7), dtype=bool)
    mask[:, 4:] = True  # padded keys
    pattern = mask_overlay(mask)
    item, reference = HatchImage(), pg.ImageItem(axisOrder="row-major")
    for it in (item, reference):
        it.setImage(pattern, autoLevels=False)
    np.testing.assert_array_equal(pixels(item), pixels(reference))
    assert item.qimage.format() == QtGui.QImage.Format.Format_ARGB32_Premultiplied
    half = pattern.copy()
    half[0, 0] = (10, 20, 30, 128)
    item.setImage(half, autoLevels=False)
    reference.setImage(half, autoLevels=False)
    np.testing.assert_array_equal(pixels(item), pixels(reference))
    assert item.qimage.format() != QtGui.QImage.Format.Format_ARGB32_Premultiplied


def test_bgra_of_swaps_red_and_blue_only(qapp):
    from gui.widgets.thumbnails import bgra_of, hatch_words, rgba_words

    img = np.random.default_rng(2).integers(0, 256, (3, 5, 4), dtype=np.uint8)
    np.testing.assert_array_equal(bgra_of(rgba_words(img)), img[..., [2, 1, 0, 3]])
    assert rgba_words(img[..., :3]) is None and hatch_words(img) is None
    img[..., 3] = 255
    img[0, 0] = 0
    assert hatch_words(img) is not None


def test_set_map_shows_what_set_image_shows(qapp):
    """The grid's short path: each new map and each change of levels is drawn exactly as pyqtgraph
    draws that map at those levels, and colours handed for the previous map are dropped."""
    lut = pg.colormap.get("viridis").getLookupTable(nPts=LUT_POINTS)
    rng = np.random.default_rng(9)
    item = ThumbnailImage()
    item.setLookupTable(lut)
    for rows, levels in [(3, (0.0, 1.0)), (4, (0.0, 1.0)), (4, (0.2, 0.6)), (5, (0.2, 0.6)), (5, (0.0, 1.0))]:
        m = rng.random((rows, 6)).astype(np.float32)
        item.set_map(m, levels)
        np.testing.assert_array_equal(item.image, m)
        assert tuple(float(x) for x in item.levels) == levels
        np.testing.assert_array_equal(pixels(item), plain(m, levels, lut))
        colour_thumbnails([item])  # colours for this map ...
        assert item._colours is not None
    item.set_map(rng.random((5, 6)).astype(np.float32), (0.0, 1.0))
    assert item._colours is None  # ... never shown for the next one


def test_raster_svg_of_the_grid_embeds_each_map_at_its_own_size(qtbot):
    """The grid's raster SVG (the vector export's fallback) holds one image per map, of that map's
    size (Qt's SVG writer embeds a drawn image whole, so a map drawn from a larger image would
    carry all of it)."""
    import base64
    import re

    from gui.export.svg import svg_document

    grid = HeadGrid(Colormap.named("viridis"))
    qtbot.addWidget(grid)
    grid.resize(800, 600)
    grid.show()
    rng = np.random.default_rng(0)
    cells = [Cell(f"L{i // 8 + 1} H{i % 8 + 1}", rng.random((9, 9)).astype(np.float32), None, (i // 8, i % 8)) for i in range(48)]
    grid.set_cells(cells, 8)
    qtbot.waitUntil(lambda: grid.views[0].width() > 20)
    grid.set_cells(cells, 8)
    svg, _ = svg_document(grid, vector=False)
    sizes = {
        QtGui.QImage.fromData(base64.b64decode(b)).size().toTuple()
        for b in re.findall(r'xlink:href="data:image/png;base64,([^"]+)"', svg)
    }
    assert sizes == {(9, 9)}
