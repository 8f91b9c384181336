"""Colouring many thumbnails in one numpy pass.

A 6 × 8-head view shows 54 thumbnails; pyqtgraph colours each ImageItem on its own when it is
painted (levels, colour table, QImage), which cost about 0.1 ms per map in Python overhead, and
every step colours all of them again. :func:`colour_stack` colours a stack of maps that share
colour levels and a colour table at once, with pyqtgraph's own arithmetic
(``functions.rescaleData``, then a table lookup), and :class:`ThumbnailImage` shows those colours
instead of computing them again. The item still holds the weights themselves (``item.image``);
its colours are exactly the ones pyqtgraph would compute from them (checked in the tests).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from pyqtgraph import functions as fn
from pyqtgraph import functions_qimage
from PySide6 import QtCore, QtGui

UNIT = QtCore.QRectF(0.0, 0.0, 1.0, 1.0)


def colour_stack(stack: np.ndarray, levels: tuple[float, float], lut: np.ndarray, bgra: bool = False) -> np.ndarray:
    """RGBA colours ``[N, rows, cols, 4]`` uint8 of ``stack [N, rows, cols]`` (finite floats) at
    colour ``levels`` (lo, hi) through the colour table ``lut [K, 3 or 4]`` uint8, K > 256; with
    ``bgra`` the channels are in B, G, R, A order (QImage's RGB32 layout in memory).

    Index ``clip((w − lo) · K / (hi − lo), 0, K − 1)`` as pyqtgraph computes it for a float image
    (``ImageItem.render``); alpha is 255 for a 3-column table.

    A table of 256 entries or fewer is one pyqtgraph draws as an indexed image (each index's colour
    from the table, the index computed the same way): the colours are the same.

    Raises:
        ValueError: a table that is not uint8 ``[K, 3 or 4]``.
    """
    if lut.dtype != np.uint8 or lut.ndim != 2 or lut.shape[0] < 1 or lut.shape[1] not in (3, 4):
        raise ValueError(f"expected a uint8 colour table [K, 3 or 4], got {lut.dtype} {lut.shape}")
    k = lut.shape[0]
    lo, hi = levels
    rng = hi - lo
    rng = 1 if rng == 0 else rng
    idx = fn.rescaleData(stack, k / rng, lo, dtype=np.min_scalar_type(k - 1), clip=(0, k - 1))
    if lut.shape[1] == 3:
        lut = np.column_stack([lut, np.full(k, 255, dtype=np.uint8)])
    if bgra:
        lut = lut[:, [2, 1, 0, 3]]
    words = np.ascontiguousarray(lut).view(np.uint32).ravel()  # one 4-byte gather per pixel, not four 1-byte ones
    return words[idx].view(np.uint8).reshape(*idx.shape, 4)


def opaque_table(lut: np.ndarray) -> bool:
    """True when the colour table ``lut [K, 3 or 4]`` has no transparent entry: its colours are drawn
    as RGB32 (Qt scales that about three times faster than RGBA8888)."""
    return lut.shape[1] == 3 or bool((lut[:, 3] == 255).all())


def colourable(image, levels, lut) -> tuple[float, float] | None:
    """The two colour levels when :func:`colour_stack` can colour ``image`` as pyqtgraph would (a
    non-empty 2-D float image, two levels, a uint8 table ``[K, 3 or 4]``), else None."""
    if (image is None or image.ndim != 2 or image.size == 0 or image.dtype.kind != "f" or levels is None
            or not isinstance(lut, np.ndarray) or lut.dtype != np.uint8 or lut.ndim != 2 or lut.shape[1] not in (3, 4)):
        return None
    flat = tuple(float(x) for x in np.ravel(levels))
    return flat if len(flat) == 2 else None


class DrawsColours:
    """Mixin for a pg.ImageItem that is handed (or computes) its colours: :meth:`show_colours`."""

    def show_colours(self, colours: np.ndarray, bgra: bool) -> None:
        """Render ``colours [rows, cols, 4]`` uint8 (B, G, R, A and opaque with ``bgra``: RGB32; else
        RGBA8888) as this item's image; the QImage keeps the array alive."""
        fmt = QtGui.QImage.Format.Format_RGB32 if bgra else QtGui.QImage.Format.Format_RGBA8888
        self.qimage = fn.ndarray_to_qimage(colours, fmt)
        self._renderRequired = False
        self._unrenderable = False


class UnitImage(pg.ImageItem):
    """A row-major ImageItem that always fills ``[0, 1]²`` of its view, whatever its image's shape.

    pyqtgraph's item spans ``[0, cols] × [0, rows]`` and is scaled into place; a thumbnail's
    decoder map gains a row at every step, so every step changed every thumbnail's geometry and
    transform (a scene-index update per item). Here the bounds never change: the image is drawn
    straight into the unit square. ``setRect`` accepts only that square."""

    fills_unit = True  # its placement never depends on the image's shape (see MatrixImage._place)

    def __init__(self) -> None:
        super().__init__(axisOrder="row-major")

    def boundingRect(self) -> QtCore.QRectF:  # noqa: N802 (Qt naming)
        return QtCore.QRectF(UNIT) if self.image is not None else QtCore.QRectF()

    def setRect(self, *args) -> None:  # noqa: N802 (pyqtgraph naming)
        """Raises ValueError for any rect but ``[0, 1]²`` (the item is always drawn there)."""
        rect = args[0] if len(args) == 1 else QtCore.QRectF(*args)
        if QtCore.QRectF(rect) != UNIT:
            raise ValueError(f"a UnitImage always fills [0, 1]², not {rect}")
        if not self.transform().isIdentity():
            self.resetTransform()

    def setImage(self, image=None, autoLevels=None, **kargs):  # noqa: N802 (pyqtgraph naming)
        """As pyqtgraph's for a 2-D or RGBA array with explicit levels (or none needed), without
        the geometry change a new shape causes there: only the first image changes the bounds."""
        if image is None or autoLevels or not isinstance(image, np.ndarray):
            return super().setImage(image, autoLevels, **kargs)
        if self._xp is not np:  # the array module pyqtgraph renders with (numpy here, never cupy)
            self._xp = np
            self._processingBuffer = None
        if self.image is None:
            self.prepareGeometryChange()
        self.image = image.view()
        self._imageHasNans = None
        self._imageNanLocations = None
        self.setOpts(update=False, **kargs)
        self._renderRequired = True
        self.update()
        return None

    def paint(self, painter, *args) -> None:
        if self.image is None:
            return
        if self._renderRequired:
            self.render()
            if self._unrenderable:
                return
        painter.drawImage(UNIT, self.qimage)


class ThumbnailImage(DrawsColours, UnitImage):
    """A :class:`UnitImage` that can be handed its colours (:meth:`set_colours`) computed for many
    maps at once. Any later change of image, levels or colour table drops them, and the item
    colours itself as pyqtgraph does."""

    def __init__(self) -> None:
        super().__init__()
        self._colours: np.ndarray | None = None
        self._bgra = False

    def set_colours(self, rgba: np.ndarray, bgra: bool = False) -> None:
        """``rgba [rows, cols, 4]`` uint8: the colours of the image just set (its shape); with
        ``bgra`` in B, G, R, A order and opaque (alpha 255 everywhere; drawn as RGB32, which Qt
        scales about three times faster than RGBA8888). Raises ValueError for another shape."""
        if self.image is None or rgba.shape[:2] != self.image.shape[:2]:
            raise ValueError("colours must have the shape of the image just set")
        self._colours = rgba
        self._bgra = bgra

    def setImage(self, image=None, autoLevels=None, **kargs):  # noqa: N802 (pyqtgraph naming)
        self._colours = None
        super().setImage(image, autoLevels, **kargs)

    def setLevels(self, levels, update=True):  # noqa: N802
        if self.levels is None or not fn.eq(levels, self.levels):
            self._colours = None
        super().setLevels(levels, update)

    def setLookupTable(self, lut, update=True):  # noqa: N802
        self._colours = None
        super().setLookupTable(lut, update)

    def render(self) -> None:
        if self._colours is None:
            return super().render()
        self.show_colours(self._colours, self._bgra)
        return None


class SharedOverlay(UnitImage):
    """A :class:`UnitImage` for an RGBA uint8 overlay that many thumbnails show at once (every head of
    a decoder view shares one causal-mask hatch): the first of them to paint turns the array into a
    QImage with pyqtgraph's own conversion, the others reuse it, instead of converting the same
    array once per thumbnail at every step. Any other image renders as pyqtgraph does."""

    _shared: dict[int, tuple[np.ndarray, QtGui.QImage]] = {}  # id(array) -> (the array kept alive, its QImage)

    def __init__(self) -> None:
        super().__init__()
        self._source: np.ndarray | None = None

    def setImage(self, image=None, autoLevels=None, **kargs):  # noqa: N802 (pyqtgraph naming)
        self._source = image if isinstance(image, np.ndarray) else None
        return super().setImage(image, autoLevels, **kargs)

    def render(self) -> None:
        src = self._source
        if (src is None or src.dtype != np.uint8 or src.ndim != 3 or src.shape[2] != 4 or self.lut is not None
                or self.levels is not None or self.image is None or self.image.shape != src.shape):
            return super().render()
        hit = self._shared.get(id(src))
        if hit is None or hit[0] is not src:
            if len(self._shared) >= 16:  # a few masks at a time: keep the cache small
                self._shared.clear()
            qimage = functions_qimage.try_make_qimage(src, levels=None, lut=None)
            if qimage is None:
                return super().render()
            hit = self._shared[id(src)] = (src, qimage)  # the array stays alive while its QImage is used
        self.qimage = hit[1]
        self._renderRequired = False
        self._unrenderable = False
        return None


class MapImage(DrawsColours, pg.ImageItem):
    """A row-major ImageItem for an enlarged map that colours its float image itself, with
    :func:`colour_stack` (pyqtgraph's arithmetic), and draws the colours as an RGB32 image. Its colour
    bar gives it a 256-entry table, which pyqtgraph draws as an indexed image: Qt converts such an
    image at every paint (a 40 × 40 map drawn at 544 × 310 took 1.24 ms, as RGB32 0.13 ms). The
    colours are computed once per change of image, levels or table, not per paint. Images it cannot
    colour so (not a 2-D float image with levels and a uint8 table) it leaves to pyqtgraph."""

    def __init__(self) -> None:
        super().__init__(axisOrder="row-major")

    def render(self) -> None:
        levels = colourable(self.image, self.levels, self.lut)
        if levels is None or not np.isfinite(self.image).all():
            return super().render()
        opaque = opaque_table(self.lut)
        self.show_colours(colour_stack(self.image[None], levels, self.lut, bgra=opaque)[0], opaque)
        return None


def colour_thumbnails(items: list[ThumbnailImage]) -> None:
    """Colour every item's current image in as few :func:`colour_stack` calls as there are
    distinct (shape, levels, colour table object) among them, and hand each item its colours. Items with
    no image, or a colour table pyqtgraph draws otherwise (≤ 256 entries), colour themselves."""
    groups: dict[tuple, list[ThumbnailImage]] = {}
    for it in items:
        levels = colourable(it.image, it.levels, it.lut)
        if levels is None or it.lut.shape[0] <= 256:
            continue
        groups.setdefault((it.image.shape, levels, id(it.lut)), []).append(it)  # one table object: one group
    for (_shape, levels, _lut), group in groups.items():
        lut = group[0].lut
        opaque = opaque_table(lut)
        colours = colour_stack(np.stack([it.image for it in group]), levels, lut, bgra=opaque)
        for it, c in zip(group, colours):
            it.set_colours(c, bgra=opaque)
