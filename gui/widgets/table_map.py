"""A table drawn as a map (rows down, columns across) with its colour bar, whose first rows can be
framed: the positional-encoding table with the current tokens' rows marked."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from gui.widgets.colormap import RGB, Colormap
from gui.widgets.colour_scale import colour_bar
from gui.widgets.labels import token_axes
from gui.widgets.matrix_image import MatrixImage


class TableMap(pg.GraphicsLayoutWidget):
    """``[rows, cols]`` values as an image (row-major, row 0 at the top) with a colour bar; rows
    ``0 … framed-1`` inside a band of colour ``edge`` with a thin line between each two of them."""

    def __init__(self, cmap: Colormap, edge: RGB, levels: tuple[float, float] = (-1.0, 1.0)) -> None:
        super().__init__()
        self.setBackground("w")
        self.edge = edge
        self.plot = self.addPlot(row=0, col=0, axisItems=token_axes("left"), enableMenu=False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.invertY(True)
        self.image = MatrixImage(self.plot.getViewBox(), cmap)
        self.colorbar = colour_bar(levels, cmap)  # small ranges shown as they are: no hidden SI scale
        self.colorbar.setImageItem(self.image.image)
        self.addItem(self.colorbar, row=0, col=1)
        self.band = pg.LinearRegionItem(
            orientation="horizontal", movable=False, brush=pg.mkBrush(None), pen=pg.mkPen(edge, width=3)
        )  # the framed rows, never tinted
        self.plot.addItem(self.band)
        self.row_lines: list[pg.InfiniteLine] = []  # thin lines between the framed rows

    def set_table(
        self,
        matrix: np.ndarray,
        levels: tuple[float, float],
        row_labels: list[str],
        font: QtGui.QFont,
        left: str,
        bottom: str,
        title: str,
    ) -> None:
        """Draw ``matrix [rows, cols]`` with colour ``levels``; the first ``len(row_labels)`` rows
        are labelled and framed; axis titles ``left``/``bottom`` and ``title`` in ``font``."""
        rows, cols = matrix.shape
        self.image.set(matrix, None, levels=levels)
        self.colorbar.setLevels(levels)
        ax_left, ax_bottom = self.plot.getAxis("left"), self.plot.getAxis("bottom")
        for ax in (ax_left, ax_bottom):
            ax.setStyle(tickFont=font)
        ax_left.setTicks([[(i + 0.5, label) for i, label in enumerate(row_labels)]])
        css = {"font-size": f"{font.pointSize()}pt"}
        self.plot.setLabel("left", left, **css)
        self.plot.setLabel("bottom", bottom, **css)
        self.plot.setTitle(title, size=f"{font.pointSize()}pt")
        n = len(row_labels)
        self.band.setRegion((0, n))
        self.band.setVisible(bool(n))
        while len(self.row_lines) < n:
            line = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen(self.edge, width=1))
            self.plot.addItem(line)
            self.row_lines.append(line)
        for i, line in enumerate(self.row_lines):
            line.setPos(i + 1)
            line.setVisible(i + 1 < n)
        self.plot.getViewBox().setRange(QtCore.QRectF(0, 0, cols, rows), padding=0)


__all__ = ["TableMap"]
