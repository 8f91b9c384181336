"""A matrix drawn in a view (an attention map: rows = queries, columns = keys; or a table): an
ImageItem holding exactly the ``[rows, cols]`` matrix it shows (row-major, y axis downwards) and,
over it, a hatched grey overlay on the masked cells (True = masked), so a masked cell never looks
like a merely small weight. Used by the enlarged map, the head grid's thumbnails, Inside one step's
strips and the positional table.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore

from gui.widgets.colormap import Colormap
from gui.widgets.colour_scale import lookup_table
from gui.widgets.map_style import mask_overlay
from gui.widgets.thumbnails import HatchImage, MapImage

_UNIT_RECT = QtCore.QRectF(0, 0, 1, 1)  # where a thumbnail's map is placed (read, never changed)


class MatrixImage:
    """An ImageItem (weights, levels [0, 1]) plus a mask overlay, placed in ``view``; ``image`` and
    ``overlay``: the (row-major) items to use. A :class:`gui.widgets.thumbnails.ThumbnailImage`
    (a thumbnail, ``set(..., unit=True)``) draws its hatch itself: ``overlay`` is then None.
    ``view``: a ``pg.ViewBox`` or a :class:`gui.widgets.thumb_view.ThumbView` (anything with ``addItem``)."""

    def __init__(self, view, cmap: Colormap, image: pg.ImageItem | None = None, overlay: pg.ImageItem | None = None) -> None:
        self.image = image if image is not None else MapImage()
        # an image item that draws the hatch itself (gui.widgets.thumbnails.ThumbnailImage) needs no overlay item
        own_hatch = overlay is None and getattr(self.image, "draws_hatch", False)
        self.overlay = None if own_hatch else overlay if overlay is not None else HatchImage()
        self.image.setLookupTable(lookup_table(cmap))
        view.addItem(self.image)
        if self.overlay is not None:
            view.addItem(self.overlay)
        self.shape: tuple[int, int] = (0, 0)
        self._placed: dict[int, object] = {}  # id(item) -> (rect, image shape) it was last placed with

    def _place(self, item: pg.ImageItem, rect: QtCore.QRectF, shape: tuple) -> None:
        """``item.setRect(rect)`` unless it already spans ``rect`` with an image of ``shape`` (its
        transform depends on both; recomputing it for every thumbnail of every step costs ms)."""
        key: object = rect.getRect() if getattr(item, "fills_unit", False) else (rect.getRect(), tuple(shape))  # UnitImage
        if self._placed.get(id(item)) != key:
            item.setRect(rect)
            self._placed[id(item)] = key

    def set_colormap(self, cmap: Colormap) -> None:
        self.image.setLookupTable(lookup_table(cmap))

    def set(
        self,
        matrix: np.ndarray,
        mask: np.ndarray | None,
        overlay: np.ndarray | None = None,
        levels: tuple[float, float] = (0.0, 1.0),
        unit: bool = False,
        *,
        finite: bool | None = None,
        masked: bool | None = None,
    ) -> None:
        """Show ``matrix [rows, cols]`` (float) with colour ``levels`` (default the fixed [0, 1]);
        ``mask`` same shape, True = masked. Cell (r, c) covers [c, c + 1] × [r, r + 1] in the view,
        or with ``unit`` the whole map covers [0, 1] × [0, 1] whatever its shape (a thumbnail: its
        view's range never changes as a decoder map grows by a row per step).

        ``finite`` (every weight is finite) and ``masked`` (``mask`` masks some cell), where the
        caller already knows them (a grid checks a stack of maps, or one shared mask, once), skip
        checking them again here; None: checked here."""
        matrix = np.asarray(matrix, dtype=np.float32)
        if not (np.isfinite(matrix).all() if finite is None else finite):
            matrix = np.nan_to_num(matrix, nan=0.0)  # never NaN on screen
        rows, cols = matrix.shape
        self.shape = (rows, cols)
        if rows == 0 or cols == 0:
            self.image.clear()
            self._show_hatch(None)
            self._placed = {}
            return
        rect = _UNIT_RECT if unit else QtCore.QRectF(0, 0, cols, rows)
        if unit and hasattr(self.image, "set_map"):  # a thumbnail: the short path
            self.image.set_map(matrix, levels)
        else:
            self.image.setImage(matrix, levels=levels, autoLevels=False)
        self._place(self.image, rect, (rows, cols))
        if mask is not None and (mask.any() if masked is None else masked):
            self._show_hatch(overlay if overlay is not None else mask_overlay(mask), rect)
        else:
            self._show_hatch(None)

    def _show_hatch(self, pattern: np.ndarray | None, rect: QtCore.QRectF | None = None) -> None:
        """Draw ``pattern`` (an RGBA hatch, placed on ``rect``: given with it) over the map, or none."""
        if self.overlay is None:
            self.image.set_hatch(pattern)
        elif pattern is None:
            self.overlay.hide()
        else:
            assert rect is not None, "a hatch is placed on the rect of its map"
            self.overlay.setImage(pattern, autoLevels=False)
            self._place(self.overlay, rect, pattern.shape[:2])
            self.overlay.show()

    @property
    def hatch(self) -> np.ndarray | None:
        """The hatch overlay drawn over the map now (RGBA uint8 ``[rows·h, cols·h, 4]``), or None."""
        if self.overlay is None:
            return self.image.hatch
        return self.overlay.image if self.overlay.isVisible() and self.overlay.image is not None else None

    def items(self) -> list[pg.ImageItem]:
        """The graphics items it draws with: the image, and the overlay where there is one."""
        return [self.image] if self.overlay is None else [self.image, self.overlay]
