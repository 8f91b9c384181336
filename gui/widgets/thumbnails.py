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

import sys

import numpy as np
import pyqtgraph as pg
from pyqtgraph import functions as fn
from pyqtgraph import functions_qimage
from PySide6 import QtCore, QtGui

UNIT = QtCore.QRectF(0.0, 0.0, 1.0, 1.0)
_UNIT_BOUNDS, _NO_BOUNDS = QtCore.QRectF(UNIT), QtCore.QRectF()  # what UnitImage.boundingRect returns


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
    return np.take(words, idx).view(np.uint8).reshape(*idx.shape, 4)  # take: about twice as fast as words[idx]


def opaque_table(lut: np.ndarray) -> bool:
    """True when the colour table ``lut [K, 3 or 4]`` has no transparent entry: its colours are drawn
    as RGB32 (Qt scales that about three times faster than RGBA8888)."""
    return lut.shape[1] == 3 or bool((lut[:, 3] == 255).all())


def colourable(image, levels, lut) -> tuple[float, float] | None:
    """The two colour levels when :func:`colour_stack` can colour ``image`` as pyqtgraph would (a
    non-empty 2-D float image, two levels, a uint8 table ``[K, 3 or 4]``), else None."""
    if (
        image is None
        or image.ndim != 2
        or image.size == 0
        or image.dtype.kind != "f"
        or levels is None
        or not isinstance(lut, np.ndarray)
        or lut.dtype != np.uint8
        or lut.ndim != 2
        or lut.shape[1] not in (3, 4)
    ):
        return None
    flat = tuple(float(x) for x in np.ravel(levels))
    return flat if len(flat) == 2 else None


def rgba_words(image: np.ndarray) -> np.ndarray | None:
    """An RGBA uint8 image ``[rows, cols, 4]`` as one uint32 per pixel (R in the low byte, A in the
    high byte on this little-endian layout), or None for anything else."""
    if image is None or image.ndim != 3 or image.dtype != np.uint8 or image.shape[2] != 4 or sys.byteorder != "little":
        return None
    return np.ascontiguousarray(image).view(np.uint32)[..., 0]


def hatch_words(image: np.ndarray) -> np.ndarray | None:
    """:func:`rgba_words` of an RGBA image whose every pixel is fully transparent black or opaque
    (a mask hatch), else None: for such pixels premultiplied colours equal the colours."""
    words = rgba_words(image)
    return words if words is not None and ((words >= 0xFF000000) | (words == 0)).all() else None


def hatch_qimage(hatch: np.ndarray) -> QtGui.QImage | None:
    """A hatch (:func:`hatch_words`) as a premultiplied ARGB32 QImage, which Qt draws scaled without
    converting it at every paint as it does RGBA8888; None for any other image."""
    words = hatch_words(hatch)
    if words is None:
        return None
    return fn.ndarray_to_qimage(bgra_of(words), QtGui.QImage.Format.Format_ARGB32_Premultiplied)  # keeps the array alive


def bgra_of(words: np.ndarray) -> np.ndarray:
    """RGBA pixels as :func:`rgba_words` gives them, with red and blue swapped: ``[rows, cols, 4]``
    uint8 in B, G, R, A order (QImage's 32-bit formats in memory); a few integer operations per
    pixel instead of a fancy-indexed copy of every channel."""
    swapped = (words & 0xFF00FF00) | ((words & 0xFF) << 16) | ((words >> 16) & 0xFF)
    return swapped.view(np.uint8).reshape(*words.shape, 4)


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

    def boundingRect(self) -> QtCore.QRectF:
        # Qt asks several times per item per repaint; one shared rect each (Qt copies it; never mutated here)
        return _UNIT_BOUNDS if self.image is not None else _NO_BOUNDS

    def setRect(self, *args) -> None:
        """Raises ValueError for any rect but ``[0, 1]²`` (the item is always drawn there)."""
        rect = args[0] if len(args) == 1 else QtCore.QRectF(*args)
        if QtCore.QRectF(rect) != UNIT:
            raise ValueError(f"a UnitImage always fills [0, 1]², not {rect}")
        if not self.transform().isIdentity():
            self.resetTransform()

    def setImage(self, image=None, autoLevels=None, **kargs):
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


_HATCHES: dict[int, tuple[np.ndarray, QtGui.QImage | None]] = {}  # id(array) -> (the array kept alive, its QImage)


def shared_hatch(hatch: np.ndarray) -> QtGui.QImage | None:
    """The QImage drawn for the RGBA uint8 overlay ``hatch [rows, cols, 4]``, converted once however
    many thumbnails show that array (every head of a decoder view shares one causal-mask hatch): a
    hatch (every pixel transparent black or opaque) as premultiplied ARGB32, which Qt draws scaled
    without converting it (for such pixels premultiplied colours are the colours); other RGBA with
    pyqtgraph's own conversion. None where pyqtgraph cannot convert it."""
    hit = _HATCHES.get(id(hatch))
    if hit is None or hit[0] is not hatch:
        if len(_HATCHES) >= 16:  # a few masks at a time: keep the cache small
            _HATCHES.clear()
        qimage = hatch_qimage(hatch)
        if qimage is None:
            qimage = functions_qimage.try_make_qimage(hatch, levels=None, lut=None)
        hit = _HATCHES[id(hatch)] = (hatch, qimage)  # the array stays alive while its QImage is used
    return hit[1]


class ThumbnailImage(DrawsColours, UnitImage):
    """A :class:`UnitImage` that can be handed its colours (:meth:`set_colours`) computed for many
    maps at once. Any later change of image, levels or colour table drops them, and the item
    colours itself as pyqtgraph does.

    It also draws its mask's hatch (:meth:`set_hatch`) over the colours, in the same paint: one
    item per thumbnail instead of two (a 6 × 8 grid repaints 48 fewer items per decoder step)."""

    draws_hatch = True  # gui.widgets.matrix_image.MatrixImage gives it the hatch instead of an overlay item

    def __init__(self) -> None:
        super().__init__()
        self._colours: np.ndarray | None = None
        self._bgra = False
        self.hatch: np.ndarray | None = None  # RGBA uint8 overlay drawn over the colours, or None

    def set_hatch(self, hatch: np.ndarray | None) -> None:
        """Draw the RGBA uint8 overlay ``hatch [rows·h, cols·h, 4]`` (:func:`gui.widgets.map_style.mask_overlay`)
        over the map, stretched to the same square; None: no hatch."""
        if hatch is not self.hatch:
            self.hatch = hatch
            self.update()

    def paint(self, painter, *args) -> None:
        super().paint(painter, *args)
        if self.hatch is not None and self.image is not None and not self._unrenderable:
            qimage = shared_hatch(self.hatch)
            if qimage is not None:
                painter.drawImage(UNIT, qimage)

    def set_colours(self, rgba: np.ndarray, bgra: bool = False) -> None:
        """``rgba [rows, cols, 4]`` uint8: the colours of the image just set (its shape); with
        ``bgra`` in B, G, R, A order and opaque (alpha 255 everywhere; drawn as RGB32, which Qt
        scales about three times faster than RGBA8888). Raises ValueError for another shape."""
        if self.image is None or rgba.shape[:2] != self.image.shape[:2]:
            raise ValueError("colours must have the shape of the image just set")
        self._colours = rgba
        self._bgra = bgra

    def setImage(self, image=None, autoLevels=None, **kargs):
        self._colours = None
        super().setImage(image, autoLevels, **kargs)

    def set_map(self, image: np.ndarray, levels: tuple[float, float]) -> None:
        """``setImage(image, levels=levels, autoLevels=False)`` for a 2-D float map ``[rows, cols]``,
        without pyqtgraph's option handling (the grid sets 48 maps per decoder step): the image, new
        levels only when they changed, and a repaint. The first image goes through :meth:`setImage`."""
        if self.image is None or self._xp is not np or image.ndim != 2:
            self.setImage(image, levels=levels, autoLevels=False)
            return
        self._colours = None
        self.image = image.view()
        self._imageHasNans = None
        self._imageNanLocations = None
        if self.levels is None or len(self.levels) != 2 or (float(self.levels[0]), float(self.levels[1])) != tuple(levels):
            UnitImage.setLevels(self, levels, update=False)
        self._renderRequired = True
        self.update()

    def setLevels(self, levels, update=True):
        if self.levels is None or not fn.eq(levels, self.levels):
            self._colours = None
        super().setLevels(levels, update)

    def setLookupTable(self, lut, update=True):
        self._colours = None
        super().setLookupTable(lut, update)

    def render(self) -> None:
        if self._colours is None:
            return super().render()
        self.show_colours(self._colours, self._bgra)
        return None


class HatchImage(pg.ImageItem):
    """A row-major ImageItem for a mask hatch (:func:`gui.widgets.map_style.mask_overlay`: every pixel
    either fully transparent black or opaque), drawn as premultiplied ARGB32: for such pixels the
    premultiplied colours are the colours themselves, and Qt draws that format scaled without
    converting it at every paint as it does RGBA8888. Other images are drawn as pyqtgraph draws them."""

    def __init__(self) -> None:
        super().__init__(axisOrder="row-major")

    def render(self) -> None:
        qimage = hatch_qimage(self.image) if self.lut is None and self.levels is None else None
        if qimage is None:
            return super().render()
        self.qimage = qimage
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
