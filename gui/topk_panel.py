"""Next-token candidates at the current step: a horizontal bar chart of probabilities."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtGui


class TopKPanel(pg.PlotWidget):
    """Bars for the top-k candidates (highest at the top); the chosen token is highlighted."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setMenuEnabled(False)
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        self.getPlotItem().invertY(True)
        self.setXRange(0, 1, padding=0.02)
        self.setLabel("bottom", "probability")
        self.bars: pg.BarGraphItem | None = None
        self.texts: list[pg.TextItem] = []
        self.tokens: list[str] = []
        self.probs: np.ndarray = np.zeros(0)

    def set_font(self, font: QtGui.QFont) -> None:
        for name in ("left", "bottom"):
            self.getAxis(name).setStyle(tickFont=font)

    def set_candidates(self, top_k: list[tuple[str, float]], chosen: str | None) -> None:
        """Show ``[(token, probability)]`` highest first; ``chosen`` is drawn in red."""
        if self.bars is not None:
            self.removeItem(self.bars)
        for t in self.texts:
            self.removeItem(t)
        self.texts = []
        self.tokens = [t for t, _ in top_k]
        self.probs = np.array([p for _, p in top_k], dtype=float)
        if not top_k:
            self.bars = None
            self.getAxis("left").setTicks([[]])
            return
        brushes = [pg.mkBrush("#c0392b" if t == chosen else "#2980b9") for t in self.tokens]
        y = np.arange(len(top_k))
        self.bars = pg.BarGraphItem(x0=0, y=y, height=0.7, width=self.probs, brushes=brushes)
        self.addItem(self.bars)
        for i, p in enumerate(self.probs):
            label = pg.TextItem(f"{p:.3f}", color="k", anchor=(0, 0.5))
            label.setPos(min(p, 0.85) + 0.01, i)
            self.addItem(label)
            self.texts.append(label)
        self.getAxis("left").setTicks([[(i, t) for i, t in enumerate(self.tokens)]])
        self.setYRange(-0.5, len(top_k) - 0.5, padding=0)
