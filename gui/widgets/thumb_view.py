"""A thumbnail's place in the head grid: a plain layout widget that shows its items in ``[0, 1]²``.

The grid used a ``pg.ViewBox`` per thumbnail, built for panning and zooming: a clipping child
group, a background item, a border item, range bookkeeping and Python ``boundingRect`` calls
that Qt makes several times per item and step. A thumbnail's range never changes (its
:class:`gui.widgets.thumbnails.UnitImage` items always fill ``[0, 1]²``), so :class:`ThumbView`
keeps only what the grid uses: a scale from ``[0, 1]²`` to its size, a background and a frame.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets


class ThumbView(QtWidgets.QGraphicsWidget):
    """A grid cell's area. Items added with :meth:`addItem` are drawn in ``[0, 1]²`` scaled to
    the widget's size, row 0 (y = 0) at the top, as in a ViewBox with ``invertY(True)`` and the
    range ``[0, 1]²``. ``border`` is the frame's pen (None or ``NoPen``: no frame), drawn over
    the items; ``setBackgroundColor`` fills the area under them (seen while no image is set).

    The names follow ``pg.ViewBox`` (``addItem``, ``setBorder``, ``setBackgroundColor``), so
    code that reads a grid cell's geometry or frame works with either.
    """

    def __init__(self) -> None:
        super().__init__()
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Expanding)
        self.border: QtGui.QPen | None = None
        self._background: QtGui.QColor | None = None
        # [0, 1]² → [0, w] × [0, h]; it also paints the background (in C++: no Python paint call per
        # thumbnail and step), under the items added to it
        self.content = QtWidgets.QGraphicsRectItem(QtCore.QRectF(0, 0, 1, 1), self)
        self.content.setPen(QtGui.QPen(QtCore.Qt.PenStyle.NoPen))
        self.content.setFlag(QtWidgets.QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, True)
        self.setFlag(QtWidgets.QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, True)  # draws nothing itself
        self.frame = QtWidgets.QGraphicsRectItem(self)  # the border, over the items
        self.frame.setZValue(1)
        self.frame.setBrush(QtGui.QBrush(QtCore.Qt.BrushStyle.NoBrush))
        self.frame.hide()

    def width(self) -> float:
        """Width in scene units (px at the view's scale 1)."""
        return self.size().width()

    def height(self) -> float:
        """Height in scene units (px at the view's scale 1)."""
        return self.size().height()

    def addItem(self, item: QtWidgets.QGraphicsItem) -> None:
        """Draw ``item`` (in ``[0, 1]²`` coordinates) in this cell."""
        item.setParentItem(self.content)

    def setBorder(self, *args, **kwargs) -> None:
        """The frame's pen, as :func:`pyqtgraph.mkPen` takes it; ``None``: no frame."""
        self.border = pg.mkPen(*args, **kwargs)
        shown = self.border.style() != QtCore.Qt.PenStyle.NoPen
        self.frame.setPen(self.border)
        self.frame.setVisible(shown)

    def setBackgroundColor(self, color) -> None:
        """Fill the cell with ``color`` (anything :func:`pyqtgraph.mkColor` takes) under its items."""
        self._background = pg.mkColor(color)
        self.content.setBrush(QtGui.QBrush(self._background))
        self.content.setFlag(QtWidgets.QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, False)

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        w, h = self.size().width(), self.size().height()
        self.content.setTransform(QtGui.QTransform.fromScale(max(w, 1e-6), max(h, 1e-6)))
        self.frame.setRect(QtCore.QRectF(0, 0, w, h))
