"""Grab a widget once its layout has settled.

pyqtgraph sizes an axis to its labels while painting them (``AxisItem._updateMaxTextSize``), so
the first paint after a change can be laid out for the previous labels: crowded bottom labels
that move to two lines ask for a taller axis only as they are drawn, and until the layout grants
it the second line sits on the axis title. On screen the next frame corrects it; a picture taken
from that first paint (a screenshot, a slide, a frame) keeps the overlap. :func:`settled_grab`
paints until two paints in a row give the same pixels.
"""

from __future__ import annotations

from PySide6 import QtGui, QtWidgets

MAX_PAINTS = 5  # a layout that still changes after this many paints is taken as it is


def settled_grab(widget: QtWidgets.QWidget, max_paints: int = MAX_PAINTS) -> QtGui.QPixmap:
    """The widget's pixels after its pending events ran and a paint changed no layout.

    Each round runs the event loop (layout requests, resizes) and grabs; it stops when a grab
    equals the one before (at least two grabs, at most ``max_paints``). Returns the last grab."""
    app = QtWidgets.QApplication.instance()
    last: QtGui.QImage | None = None
    pixmap = QtGui.QPixmap()
    for _ in range(max(2, max_paints)):
        if app is not None:
            app.processEvents()
        pixmap = widget.grab()
        image = pixmap.toImage()
        if last is not None and image == last:
            break
        last = image
    return pixmap
