"""Each cell's printed value, for every cell of a map, drawn by one graphics item.

One ``pg.TextItem`` per cell cost 0.2–0.3 ms each to place (a 16 × 16 map: 50–80 ms on the GUI
thread per result). :class:`CellValues` keeps plain arrays (texts and whether each is dark on a
bright cell) and draws them all in one ``paint`` call, at the map's font size in screen pixels
whatever the view's scale (as ``TextItem`` does): the font never stretches with the cells.
:func:`cell_text` is how one weight is printed, :func:`value_font` the font that fits a cell.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

DARK = QtGui.QColor("#111111")  # on bright cells and on masked (grey hatched) cells
LIGHT = QtGui.QColor("#f5f5f5")  # on dark cells
VALUES_UP_TO = 16  # maps with at most this many rows and columns can print each cell's value
VALUE_MIN_PT = 8  # with shrink, cell values shrink to fit their cells down to this size


def cell_text(v: float) -> str:
    """A weight as printed in its cell: two decimals, the leading 0 dropped (".25"); values that
    round to 1.00 read "1.0", never ".00"."""
    text = f"{v:.2f}"
    return text[1:] if text.startswith("0.") else "1.0" if text == "1.00" else text


def value_font(font: QtGui.QFont, cell_w: float, cell_h: float, shrink: bool = False) -> QtGui.QFont | None:
    """``font``, or (``shrink``) the largest smaller size of it down to VALUE_MIN_PT, at which "0.00"
    fits a cell ``cell_w`` × ``cell_h`` pixels; None when not even that fits (no values then: never
    a value wider than its cell)."""
    out = QtGui.QFont(font)
    for pt in range(font.pointSize(), (VALUE_MIN_PT if shrink else font.pointSize()) - 1, -1):
        out.setPointSize(pt)
        fm = QtGui.QFontMetricsF(out)
        if cell_w >= fm.horizontalAdvance("0.00") + 4 and cell_h >= fm.height():
            return out
    return None


class CellValues(pg.GraphicsObject):
    """The values of a ``[rows, cols]`` map, one centred text per cell at (c + 0.5, r + 0.5) in the
    view's coordinates (cell (r, c) covers [c, c + 1] × [r, r + 1], as the map's ImageItem).

    ``texts`` is row-major (``texts[r * cols + c]``); ``dark [rows, cols]`` (bool) says which cells
    get dark text. Nothing is drawn while ``texts`` is empty.
    """

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.dark = np.zeros((0, 0), dtype=bool)
        self.font = QtGui.QFont()
        self.setZValue(10)  # above the image and the mask hatch
        self.setAcceptedMouseButtons(QtCore.Qt.MouseButton.NoButton)  # clicks and hovers reach the map
        # (no Python attribute may shadow QGraphicsItem's virtuals, e.g. ``shape``: Qt calls them on clicks)

    def set_cells(self, texts: list[str], dark: np.ndarray, font: QtGui.QFont) -> None:
        """Show ``texts`` (row-major, one per cell of ``dark [rows, cols]``) in ``font``.
        Raises ValueError when the counts differ."""
        dark = np.asarray(dark, dtype=bool)
        if len(texts) != dark.size:
            raise ValueError(f"{len(texts)} texts for a {dark.shape[0]} × {dark.shape[1]} map")
        self.prepareGeometryChange()
        self.texts, self.dark, self.font = list(texts), dark, QtGui.QFont(font)
        self.update()

    def clear(self) -> None:
        """No values (the map is empty, too large, or values are off)."""
        self.set_cells([], np.zeros((0, 0), dtype=bool), self.font)

    def shown(self) -> list[str]:
        """The texts on screen, row-major ([] when hidden or empty)."""
        return list(self.texts) if self.isVisible() else []

    def boundingRect(self) -> QtCore.QRectF:
        rows, cols = self.dark.shape
        return QtCore.QRectF(0, 0, cols, rows)

    def paint(self, painter: QtGui.QPainter, *args) -> None:
        if not self.texts:
            return
        rows, cols = self.dark.shape
        to_device = painter.transform()  # view coordinates -> the painter's device pixels
        painter.save()
        painter.resetTransform()  # text at its point size, not stretched with the cells
        painter.setFont(self.font)
        fm = QtGui.QFontMetricsF(self.font)
        height = fm.height()
        align = QtCore.Qt.AlignmentFlag.AlignCenter
        for idx, text in enumerate(self.texts):
            r, c = divmod(idx, cols)
            centre = to_device.map(QtCore.QPointF(c + 0.5, r + 0.5))
            width = fm.horizontalAdvance(text) + 4
            painter.setPen(DARK if self.dark[r, c] else LIGHT)
            painter.drawText(QtCore.QRectF(centre.x() - width / 2, centre.y() - height / 2, width, height), align, text)
        painter.restore()
