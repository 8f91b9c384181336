"""Small multiples: one thumbnail per (layer, head) — or per mask — with a click to enlarge."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from gui.heatmap import MatrixImage, mask_overlay


@dataclass
class Cell:
    """One thumbnail: ``matrix [rows, cols]``, ``mask`` (True = masked) or None, and a title."""

    title: str
    matrix: np.ndarray
    mask: np.ndarray | None
    key: tuple


class HeadGrid(pg.GraphicsLayoutWidget):
    """A grid of thumbnails, ``n_cols`` per row. Emits ``clicked(key)`` for the chosen cell.

    Redraw reuses the ImageItems; it only rebuilds the layout when the grid's shape changes.
    """

    clicked = QtCore.Signal(object)

    def __init__(self, cmap: pg.ColorMap, parent=None) -> None:
        super().__init__(parent)
        self.cmap = cmap
        self.ci.setSpacing(2)
        self.images: list[MatrixImage] = []
        self.views: list[pg.ViewBox] = []
        self.labels: list[pg.LabelItem] = []
        self.keys: list[tuple] = []
        self.layout_shape: tuple[int, int] = (0, 0)
        self.selected: tuple | None = None
        self.font = QtGui.QFont()
        self._label_text: dict[int, tuple] = {}
        self._ranged: dict[int, bool] = {}

    def _build(self, n: int, n_cols: int) -> None:
        self.clear()
        self._label_text, self._ranged = {}, {}
        self.images, self.views, self.labels = [], [], []
        for i in range(n):
            r, c = divmod(i, n_cols)
            label = self.addLabel("", row=2 * r, col=c, size="8pt")
            view = self.addViewBox(row=2 * r + 1, col=c, lockAspect=False, enableMouse=False)
            view.invertY(True)
            view.setMenuEnabled(False)
            view.setBackgroundColor((235, 235, 235))
            self.images.append(MatrixImage(view, self.cmap))
            self.views.append(view)
            self.labels.append(label)
        self.layout_shape = (n, n_cols)

    def set_colormap(self, cmap: pg.ColorMap) -> None:
        self.cmap = cmap
        for im in self.images:
            im.set_colormap(cmap)

    def set_cells(self, cells: list[Cell], n_cols: int) -> None:
        """Show ``cells`` in a grid of ``n_cols`` columns (heads across, layers down)."""
        if self.layout_shape != (len(cells), n_cols):
            self._build(len(cells), n_cols)
        self.keys = [c.key for c in cells]
        overlay_cache: dict[int, np.ndarray] = {}
        for cell, im, view, label in zip(cells, self.images, self.views, self.labels):
            overlay = None
            if cell.mask is not None and cell.mask.any():
                overlay = overlay_cache.get(id(cell.mask))
                if overlay is None:
                    overlay = overlay_cache[id(cell.mask)] = mask_overlay(cell.mask)
            shape_before = im.shape
            im.set(cell.matrix, cell.mask, overlay)
            rows, cols = cell.matrix.shape
            if im.shape != shape_before or not self._ranged.get(id(view)):
                view.setRange(QtCore.QRectF(0, 0, max(cols, 1), max(rows, 1)), padding=0)
                self._ranged[id(view)] = True
            chosen = cell.key == self.selected
            text = (("▶ " if chosen else "") + cell.title, chosen, max(self.font.pointSize() - 2, 7))
            if self._label_text.get(id(label)) != text:  # setText re-lays out: skip when unchanged
                label.setText(text[0], color="#c0392b" if chosen else "#333333", size=f"{text[2]}pt")
                self._label_text[id(label)] = text

    def cell_at(self, scene_pos) -> tuple | None:
        for key, view in zip(self.keys, self.views):
            if view.sceneBoundingRect().contains(scene_pos):
                return key
        return None

    def mousePressEvent(self, ev) -> None:  # noqa: N802 (Qt naming)
        key = self.cell_at(self.mapToScene(ev.position().toPoint()))
        if key is not None:
            self.clicked.emit(key)
        super().mousePressEvent(ev)
