"""Training curves of a live run: the loss (train and held-out, nats/token) above, exact-match
accuracy and alignment (0-1) below, over updates, with a vertical line at the snapshot shown."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtGui

from gui.widgets.pg_config import configure, no_background_cache

SERIES = {  # name -> (label, colour)
    "train_loss": ("train loss", "#1f77b4"),
    "heldout_nll": ("held-out loss", "#ff7f0e"),
    "accuracy": ("exact match", "#2ca02c"),
    "alignment": ("alignment", "#9467bd"),
}


class LearnCurves(pg.GraphicsLayoutWidget):
    """Two plots sharing the update axis. :meth:`set_series` draws the curves (NaN values are
    left out: never a NaN on screen); :meth:`set_marker` moves the line marking the shown
    snapshot (cheap: scrubbing only moves it; no grid lines, whose axes would be repainted with
    every move of the marker, as they cover the plot). ``lines[name]``: the PlotDataItem of each series."""

    def __init__(self, parent=None) -> None:
        configure()
        super().__init__(parent)
        no_background_cache(self)
        self.loss = self.addPlot(row=0, col=0, enableMenu=False)
        self.score = self.addPlot(row=1, col=0, enableMenu=False)
        self.loss.setLabel("left", "loss (nats/token)")
        self.score.setLabel("left", "share (0-1)")
        self.score.setLabel("bottom", "update")
        self.score.setYRange(0, 1.0, padding=0.02)
        self.score.setXLink(self.loss)
        self.lines: dict[str, pg.PlotDataItem] = {}
        self.markers: list[pg.InfiniteLine] = []
        for plot, names in ((self.loss, ("train_loss", "heldout_nll")), (self.score, ("accuracy", "alignment"))):
            plot.setMouseEnabled(x=False, y=False)
            plot.hideButtons()
            legend = plot.addLegend(offset=(-8, 8))
            for name in names:
                label, colour = SERIES[name]
                self.lines[name] = plot.plot([], [], pen=pg.mkPen(colour, width=2), symbol="o", symbolSize=4,
                                             symbolBrush=colour, symbolPen=None, name=label)  # fmt: skip
            marker = pg.InfiniteLine(0, angle=90, pen=pg.mkPen("#c0392b", width=1.5))
            plot.addItem(marker, ignoreBounds=True)
            self.markers.append(marker)
            legend.setLabelTextColor("#333333")
        self.n_points = 0

    def set_font(self, font: QtGui.QFont) -> None:
        for plot in (self.loss, self.score):
            for name in ("left", "bottom"):
                plot.getAxis(name).setStyle(tickFont=font)

    def set_series(self, updates: np.ndarray, series: dict[str, np.ndarray], limits: tuple[float, float] | None = None) -> None:
        """Draw each named series (same length as ``updates``) over ``updates``. ``limits``: (last
        update, highest loss) fixes both axes (frames of an animation keep still axes); None fits
        the updates and lets the loss axis follow the data."""
        self.n_points = len(updates)
        for name, line in self.lines.items():
            y = np.asarray(series.get(name, np.full(len(updates), np.nan)), dtype=np.float64)
            ok = np.isfinite(y)
            line.setData(np.asarray(updates, dtype=np.float64)[ok], y[ok])
        right = float(updates[-1]) if len(updates) else 1.0
        if limits is not None:
            right = limits[0]
            self.loss.setYRange(0, max(limits[1], 1e-3), padding=0.02)
        else:
            self.loss.enableAutoRange(axis="y")
        self.loss.setXRange(0, max(right, 1.0), padding=0.02)

    def set_marker(self, update: float) -> None:
        """Move the line marking the shown snapshot to ``update``."""
        for marker in self.markers:
            marker.setValue(float(update))


__all__ = ["SERIES", "LearnCurves"]
