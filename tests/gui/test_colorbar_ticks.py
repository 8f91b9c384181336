"""Colour-bar and strip tick labels read the values themselves: pyqtgraph's automatic SI prefix
(which turns a bar up to 0.02 into 10 … 20 with a small "(x0.001)" once the bar's label is shown)
is off. The strings checked are the ones the axis would paint (``generateDrawSpecs``)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtGui, QtWidgets

from gui.panels.pair_views import DiffHeatmap
from gui.widgets.heatmap import Heatmap
from gui.widgets.strips import ValueStrip


def painted_ticks(axis) -> list[str]:
    """The tick texts ``axis`` draws now (after the window has laid it out)."""
    img = QtGui.QImage(600, 600, QtGui.QImage.Format.Format_ARGB32)
    painter = QtGui.QPainter(img)
    try:
        texts = axis.generateDrawSpecs(painter)[2]
    finally:
        painter.end()
    return [t for _, _, t in texts]


def numbers(texts: list[str]) -> np.ndarray:
    return np.array([float(t.replace("−", "-")) for t in texts])


def shown(qtbot, widget) -> None:
    widget.resize(520, 420)
    widget.show()
    qtbot.waitExposed(widget)
    QtWidgets.QApplication.processEvents()


def test_per_map_colour_bar_ticks_are_the_values(qtbot):
    h = Heatmap(pg.colormap.get("viridis"))
    qtbot.addWidget(h)
    h.set_font(QtGui.QFont())
    h.set_scale("per-map")
    shown(qtbot, h)
    # the first map shows the bar's label; from the second on pyqtgraph would rescale small ranges
    for lo, hi in ((0.2, 0.3), (0.01, 0.02), (0.0122, 0.0128), (0.2, 0.9)):
        h.set_matrix(np.linspace(lo, hi, 12).reshape(3, 4), None, list("abc"), list("defg"))
        QtWidgets.QApplication.processEvents()
        texts = painted_ticks(h.colorbar.axis)
        assert len(texts) >= 2, (lo, hi, texts)
        v = numbers(texts)
        assert (v >= lo - 1e-12).all() and (v <= hi + 1e-12).all(), (lo, hi, texts)
        assert "(x" not in h.colorbar.axis.labelString()


def test_difference_colour_bar_ticks_are_the_values(qtbot):
    d = DiffHeatmap()
    qtbot.addWidget(d)
    d.set_font(QtGui.QFont())
    shown(qtbot, d)
    for m in (0.99, 0.05):
        d.set_matrix(np.linspace(-m, m, 12).reshape(3, 4), None, list("abc"), list("defg"))
        QtWidgets.QApplication.processEvents()
        v = numbers(painted_ticks(d.colorbar.axis))
        assert v.size >= 2 and np.abs(v).max() <= m + 1e-12 and np.abs(v).max() >= m / 4


def test_inside_strip_ticks_are_the_tokens_for_small_values(qtbot):
    layout = pg.GraphicsLayoutWidget()
    qtbot.addWidget(layout)
    strip = ValueStrip(layout.ci, 0, pg.colormap.get("viridis"), diverging=True)
    shown(qtbot, layout)
    keys = ["집", "에", "누군가", "</s>"]
    for scale in (1.0, 1e-3):  # twice: a second draw is where a hidden prefix would appear
        strip.set(np.array([[0.4, -0.2, 0.1, 0.3]]) * scale, ["q"], keys, "scores")
        QtWidgets.QApplication.processEvents()
        assert painted_ticks(strip.plot.getAxis("bottom")) == keys
        assert painted_ticks(strip.plot.getAxis("left")) == ["q"]
        for name in ("left", "bottom"):
            assert "(x" not in strip.plot.getAxis(name).labelString()
