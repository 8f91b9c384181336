"""Attention heatmaps: rows = queries, columns = keys (ImageItem row-major, y axis downwards).

Weights are drawn with fixed colour levels [0, 1]; masked cells (True = masked) are covered
by a hatched grey overlay so they never look like a merely small weight. The ImageItem holds
exactly the attention matrix it shows (``heatmap.image.image``).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

COLORMAPS = {"viridis": "viridis", "cividis (colour-blind safe)": "cividis", "inferno": "inferno"}
HATCH = 4  # overlay pixels per cell side


def mask_overlay(mask: np.ndarray) -> np.ndarray:
    """RGBA overlay ``[rows·4, cols·4, 4]``: hatched grey on masked cells, transparent elsewhere."""
    rows, cols = mask.shape
    big = np.repeat(np.repeat(mask, HATCH, 0), HATCH, 1)
    yy, xx = np.indices(big.shape)
    stripe = (yy + xx) % HATCH == 0
    rgba = np.zeros((*big.shape, 4), dtype=np.uint8)
    rgba[big] = (215, 215, 215, 255)
    rgba[big & stripe] = (120, 120, 120, 255)
    return rgba


class MatrixImage:
    """An ImageItem (weights, levels [0, 1]) plus a mask overlay, placed in ``view``."""

    def __init__(self, view: pg.ViewBox, cmap: pg.ColorMap) -> None:
        self.image = pg.ImageItem(axisOrder="row-major")
        self.overlay = pg.ImageItem(axisOrder="row-major")
        self.image.setLookupTable(cmap.getLookupTable(nPts=256))
        view.addItem(self.image)
        view.addItem(self.overlay)
        self.shape: tuple[int, int] = (0, 0)

    def set_colormap(self, cmap: pg.ColorMap) -> None:
        self.image.setLookupTable(cmap.getLookupTable(nPts=256))

    def set(self, matrix: np.ndarray, mask: np.ndarray | None, overlay: np.ndarray | None = None) -> None:
        """Show ``matrix [rows, cols]`` (float, 0..1); ``mask`` same shape, True = masked."""
        matrix = np.nan_to_num(np.asarray(matrix, dtype=np.float32), nan=0.0)  # never NaN on screen
        rows, cols = matrix.shape
        self.shape = (rows, cols)
        if rows == 0 or cols == 0:
            self.image.clear()
            self.overlay.clear()
            return
        self.image.setImage(matrix, levels=(0.0, 1.0), autoLevels=False)
        self.image.setRect(QtCore.QRectF(0, 0, cols, rows))
        if mask is not None and mask.any():
            self.overlay.setImage(overlay if overlay is not None else mask_overlay(mask), autoLevels=False)
            self.overlay.setRect(QtCore.QRectF(0, 0, cols, rows))
            self.overlay.show()
        else:
            self.overlay.hide()


class Heatmap(pg.GraphicsLayoutWidget):
    """The enlarged map: token ticks on both axes, a fixed [0, 1] colour bar and a hover read-out.

    Signals: ``hovered(str)`` with "query → key: weight" text.
    """

    hovered = QtCore.Signal(str)

    def __init__(self, cmap: pg.ColorMap, parent=None) -> None:
        super().__init__(parent)
        self.plot = self.addPlot(row=0, col=0)
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.invertY(True)  # row 0 (first query) at the top
        self.plot.showAxis("top")
        self.plot.getAxis("top").setStyle(showValues=False)
        self.view = self.plot.getViewBox()
        self.matrix_image = MatrixImage(self.view, cmap)
        self.colorbar = pg.ColorBarItem(values=(0, 1), colorMap=cmap, interactive=False, width=14)
        self.colorbar.setImageItem(self.matrix_image.image)
        self.addItem(self.colorbar, row=0, col=1)
        self.matrix: np.ndarray = np.zeros((0, 0))
        self.mask: np.ndarray | None = None
        self.row_tokens: list[str] = []
        self.col_tokens: list[str] = []
        self.scene().sigMouseMoved.connect(self._on_mouse)

    @property
    def image(self) -> pg.ImageItem:
        return self.matrix_image.image

    def set_colormap(self, cmap: pg.ColorMap) -> None:
        self.matrix_image.set_colormap(cmap)
        self.colorbar.setColorMap(cmap)

    def set_font(self, font: QtGui.QFont) -> None:
        for name in ("left", "bottom"):
            self.plot.getAxis(name).setStyle(tickFont=font)
        self.plot.titleLabel.item.setFont(font)

    def set_matrix(self, matrix: np.ndarray, mask: np.ndarray | None, row_tokens: list[str],
                   col_tokens: list[str], title: str = "", row_label: str = "query", col_label: str = "key") -> None:
        """Show ``matrix [rows, cols]`` with one tick per token (row i at y = i + 0.5)."""
        self.matrix, self.mask = matrix, mask
        self.row_tokens, self.col_tokens = list(row_tokens), list(col_tokens)
        self.matrix_image.set(matrix, mask)
        rows, cols = matrix.shape
        self.plot.getAxis("left").setTicks([[(i + 0.5, t) for i, t in enumerate(self.row_tokens)]])
        self.plot.getAxis("bottom").setTicks([[(j + 0.5, t) for j, t in enumerate(self.col_tokens)]])
        self.plot.setLabel("left", f"{row_label} (rows)")
        self.plot.setLabel("bottom", f"{col_label} (columns)")
        self.plot.setTitle(title)
        self.view.setRange(QtCore.QRectF(0, 0, max(cols, 1), max(rows, 1)), padding=0)

    def describe(self, row: int, col: int) -> str:
        """Read-out for one cell: "query 'x' → key 'y': 0.1234" (or "masked")."""
        value = float(self.matrix[row, col])
        masked = self.mask is not None and bool(self.mask[row, col])
        q = self.row_tokens[row] if row < len(self.row_tokens) else str(row)
        k = self.col_tokens[col] if col < len(self.col_tokens) else str(col)
        what = "masked (may not attend)" if masked else f"{value:.4f}"
        return f"query {row} '{q}' → key {col} '{k}': {what}"

    def _on_mouse(self, pos) -> None:
        if not self.plot.sceneBoundingRect().contains(pos) or self.matrix.size == 0:
            return
        p = self.view.mapSceneToView(pos)
        row, col = int(np.floor(p.y())), int(np.floor(p.x()))
        if 0 <= row < self.matrix.shape[0] and 0 <= col < self.matrix.shape[1]:
            self.hovered.emit(self.describe(row, col))
