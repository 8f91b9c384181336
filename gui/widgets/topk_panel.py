"""Next-token candidates at the current step: a horizontal bar chart of probabilities."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from gui.widgets.labels import no_si_prefix, token_axes
from gui.widgets.pg_config import no_background_cache


class TopKPanel(pg.PlotWidget):
    """Bars for the top-k candidates (highest at the top); the chosen token is highlighted.
    Clicking a bar emits ``clicked(index)`` (0 = the most likely candidate): force that token."""

    clicked = QtCore.Signal(int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent, axisItems=token_axes("left"), enableMenu=False)  # no menu built at all
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        self.getPlotItem().invertY(True)
        no_si_prefix(self.getPlotItem())
        no_background_cache(self)
        self.setXRange(0, 1.05, padding=0.02)  # values sit inside long bars, after short ones
        self.font = QtGui.QFont()
        self.setLabel("bottom", "probability")
        for name in ("left", "bottom"):
            self.hideAxis(name)  # nothing meaningful before the first step
        self.bars: pg.BarGraphItem | None = None
        self.shaped_bars: pg.BarGraphItem | None = None  # sampling: the distribution drawn from
        self.shaped: np.ndarray | None = None
        self.title = "probability"
        self.texts: list[pg.TextItem] = []
        self.tokens: list[str] = []
        self.probs: np.ndarray = np.zeros(0)
        self.scene().sigMouseClicked.connect(self._on_click)

    def index_at(self, scene_pos) -> int | None:
        """The candidate under a scene position, or None (bars are at y = 0..n-1, height 0.7)."""
        p = self.getPlotItem().vb.mapSceneToView(scene_pos)
        i = int(round(p.y()))
        return i if 0 <= i < len(self.tokens) and abs(p.y() - i) <= 0.5 and p.x() >= 0 else None

    def _on_click(self, ev) -> None:
        i = self.index_at(ev.scenePos())
        if i is not None:
            self.clicked.emit(i)

    def set_font(self, font: QtGui.QFont) -> None:
        """Tick labels, the axis title and the value labels follow ``font``."""
        self.font = QtGui.QFont(font)
        for name in ("left", "bottom"):
            self.getAxis(name).setStyle(tickFont=font)
        self.setLabel("bottom", self.title, **{"font-size": f"{font.pointSize()}pt"})
        if self.bars is None:
            self.hideAxis("bottom")  # setLabel shows it: nothing meaningful before the first step
        for label in self.texts:
            label.setFont(font)

    def set_candidates(self, top_k: list[tuple[str, float]], chosen: str | None, shaped: list[float] | None = None) -> None:
        """Show ``[(token, probability)]`` highest first; ``chosen`` is drawn in red. ``shaped``
        (sampling): each candidate's probability in the distribution the step drew from (after
        temperature and the top-k / top-p cut), drawn as a thin orange bar under the model's own;
        the axis title says which is which.

        Items are updated in place (no re-creation per step: this runs on every redraw)."""
        self.tokens = [t for t, _ in top_k]
        self.probs = np.array([p for _, p in top_k], dtype=float)
        self.shaped = None if shaped is None else np.array(shaped, dtype=float)
        n = len(top_k)
        if self.bars is None:
            self.bars = pg.BarGraphItem(x0=0, y=[], height=0.7, width=[])
            self.addItem(self.bars)
        if self.shaped_bars is None:
            self.shaped_bars = pg.BarGraphItem(x0=0, y=[], height=0.18, width=[], brush=pg.mkBrush("#e67e22"))
            self.addItem(self.shaped_bars)
        if self.shaped is None:
            self.shaped_bars.setOpts(x0=0, y=[], height=0.18, width=[])
        else:
            self.shaped_bars.setOpts(x0=0, y=np.arange(n) + 0.3, height=0.18, width=self.shaped)
        title = "probability" if self.shaped is None else "probability (blue: the model's · orange: sampled from)"
        if title != self.title:
            self.title = title
            self.setLabel("bottom", title, **{"font-size": f"{self.font.pointSize()}pt"})
        while len(self.texts) < n:
            label = pg.TextItem("", color="k", anchor=(0, 0.5))
            label.setFont(self.font)
            self.addItem(label)
            self.texts.append(label)
        brushes = [pg.mkBrush("#c0392b" if t == chosen else "#2980b9") for t in self.tokens]
        self.bars.setOpts(x0=0, y=np.arange(n), height=0.7, width=self.probs, brushes=brushes)
        for i, label in enumerate(self.texts):
            if i < n:
                label.setText(f"{self.probs[i]:.3f}")
                inside = self.probs[i] > 0.55  # long bar: the value inside it, so it is never cut off
                label.setAnchor((1, 0.5) if inside else (0, 0.5))
                label.setColor("w" if inside else "k")
                label.setPos(self.probs[i] - 0.01 if inside else self.probs[i] + 0.01, i)
                label.show()
            else:
                label.hide()
        for name in ("left", "bottom"):
            if not self.getAxis(name).isVisible():  # showing a shown axis lays its ticks out again
                self.showAxis(name)
        self.getAxis("left").setTicks([[(i, t) for i, t in enumerate(self.tokens)]])
        self.setYRange(-0.5, max(n, 1) - 0.5, padding=0)
