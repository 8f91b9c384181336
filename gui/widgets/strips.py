"""Small labelled matrices for the inside and positional-encoding views, and a pop-out for a tab.

:class:`ValueStrip` draws one ``[rows, cols]`` matrix (a vector is ``[1, n]``) with its own colour
levels, token ticks on both axes, the value printed in each cell when the matrix has at most
:data:`VALUES_UP_TO` columns and rows, and cells flagged ``neg_inf`` (a masked score, −∞) hatched
grey with the text "−∞": −∞ never reaches the colour map (and NaN is never drawn).
``ValueStrip.matrix`` is exactly the array it was given; ``cell_texts`` what each cell says.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from gui.widgets.colormap import Colormap
from gui.widgets.labels import token_axes, wrap_title
from gui.widgets.matrix_image import MatrixImage

VALUES_UP_TO = 16  # print each cell's value in matrices up to this many rows and columns
NEG_INF = "−∞"


def signed_levels(values: np.ndarray) -> tuple[float, float]:
    """Colour levels symmetric about 0 (±max |finite value|), never an empty interval."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    top = float(np.abs(v).max()) if v.size else 1.0
    return (-top, top) if top > 0 else (-1.0, 1.0)


def value_text(v: float) -> str:
    """A cell's number: two decimals (one from 10, none from 100), "−∞" for −inf."""
    if np.isneginf(v):
        return NEG_INF
    a = abs(v)
    text = f"{v:.2f}" if a < 10 else f"{v:.1f}" if a < 100 else f"{v:.0f}"
    return text.replace("-", "−")


def range_text(v: float) -> str:
    """A colour-range end in a title: 3 significant digits (±0.00412 stays readable), "−" sign."""
    return f"{v:.3g}".replace("-", "−")


class StripStack(pg.GraphicsLayoutWidget):
    """:class:`ValueStrip` s one under another on a white background, in one column."""

    def __init__(self) -> None:
        super().__init__()
        self.setBackground("w")
        self.strips: list[ValueStrip] = []

    def add_strip(self, cmap: Colormap, diverging: bool = False) -> ValueStrip:
        """A new strip in the next row."""
        self.strips.append(ValueStrip(self.ci, len(self.strips), cmap, diverging))
        return self.strips[-1]

    def set_row_heights(self, heights: list[int], extra: int = 20) -> None:
        """Fix row ``i`` at ``heights[i]`` pixels; the widget is at least their sum + ``extra`` tall."""
        for i, h in enumerate(heights):
            self.ci.layout.setRowFixedHeight(i, h)
        self.setMinimumHeight(int(sum(self.ci.layout.rowMinimumHeight(i) for i in range(len(heights)))) + extra)


class ValueStrip:
    """One matrix as a PlotItem in ``layout`` at ``row``: image, token axes, printed values."""

    def __init__(self, layout: pg.GraphicsLayout, row: int, cmap: Colormap, diverging: bool = False) -> None:
        self.diverging = diverging  # light in the middle of the levels: dark text there, light at the ends
        self.plot = layout.addPlot(row=row, col=0, axisItems=token_axes("left", "bottom"), enableMenu=False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.invertY(True)
        self.view = self.plot.getViewBox()
        self.image = MatrixImage(self.view, cmap)
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.neg_inf: np.ndarray | None = None
        self.cell_texts: dict[tuple[int, int], str] = {}
        self.items: list[pg.TextItem] = []
        self.font = QtGui.QFont()
        self.levels = (0.0, 1.0)
        self.view.sigResized.connect(self._wrap_title)

    def _wrap_title(self, *_) -> None:
        """The title wraps to the plot's width (never widens the panel)."""
        wrap_title(self.plot.titleLabel, max(self.view.width(), 10 * QtGui.QFontMetricsF(self.font).averageCharWidth()))

    def set_colormap(self, cmap: Colormap) -> None:
        self.image.set_colormap(cmap)

    def set_font(self, font: QtGui.QFont) -> None:
        self.font = QtGui.QFont(font)
        for name in ("left", "bottom"):
            self.plot.getAxis(name).setStyle(tickFont=font)
        for item in self.items:
            item.setFont(font)

    def clear(self) -> None:
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.neg_inf, self.cell_texts = None, {}
        self.image.set(self.matrix, None)
        for item in self.items:
            item.hide()
        self.plot.setTitle("")

    def set(
        self,
        matrix: np.ndarray,
        row_tokens: list[str],
        col_tokens: list[str],
        title: str,
        levels: tuple[float, float] | None = None,
        neg_inf: np.ndarray | None = None,
    ) -> None:
        """Show ``matrix [rows, cols]``; ``levels`` default :func:`signed_levels`; ``neg_inf``
        ``[rows, cols]`` bool: cells that are −∞ (masked), hatched and labelled "−∞"."""
        m = np.asarray(matrix)
        if m.ndim == 1:
            m = m[None, :]
        self.matrix = m
        flag = np.isneginf(m) if neg_inf is None else np.asarray(neg_inf, dtype=bool).reshape(m.shape)
        self.neg_inf = flag
        self.levels = signed_levels(m[~flag]) if levels is None else levels
        shown = np.where(flag | ~np.isfinite(m), self.levels[0], m).astype(np.float32)  # finite only
        self.image.set(shown, flag if flag.any() else None, levels=self.levels)
        rows, cols = m.shape
        self.plot.getAxis("left").setTicks([[(i + 0.5, t) for i, t in enumerate(row_tokens)]])
        self.plot.getAxis("bottom").setTicks([[(j + 0.5, t) for j, t in enumerate(col_tokens)]])
        lo, hi = self.levels
        self.plot.setTitle(
            f"{title} <span style='color:#777'>(colour {range_text(lo)} … {range_text(hi)})</span>",
            size=f"{max(self.font.pointSize(), 6)}pt",
        )
        self._wrap_title()
        self.view.setRange(QtCore.QRectF(0, 0, max(cols, 1), max(rows, 1)), padding=0)
        small = rows <= VALUES_UP_TO and cols <= VALUES_UP_TO
        self.cell_texts = {
            (r, c): value_text(float(m[r, c])) if not flag[r, c] else NEG_INF
            for r in range(rows)
            for c in range(cols)
            if small or flag[r, c]
        }
        self._draw_texts()

    def _draw_texts(self) -> None:
        while len(self.items) < len(self.cell_texts):
            item = pg.TextItem("", anchor=(0.5, 0.5))
            item.setFont(self.font)
            self.view.addItem(item)
            self.items.append(item)
        lo, hi = self.levels
        cells = list(self.cell_texts.items())
        for i, item in enumerate(self.items):
            if i >= len(cells):
                item.hide()
                continue
            (r, c), text = cells[i]
            v = float(self.matrix[r, c])
            t = (v - lo) / (hi - lo) if hi > lo else 0.5
            bright = text == NEG_INF or (abs(t - 0.5) < 0.3 if self.diverging else t > 0.6)
            item.setText(text)
            item.setColor("#111111" if bright else "#f5f5f5")
            item.fill = pg.mkBrush(255, 255, 255, 230) if text == NEG_INF else pg.mkBrush(None)  # legible on hatch
            item.setPos(c + 0.5, r + 0.5)
            item.show()


class PopOut(QtCore.QObject):
    """Moves ``panel`` (a tab of ``tabs``) into a window of its own and back when it closes;
    the tab meanwhile says where the panel went."""

    def __init__(self, tabs: QtWidgets.QTabWidget, panel: QtWidgets.QWidget, title: str) -> None:
        super().__init__(panel)
        self.tabs, self.panel, self.title = tabs, panel, title
        self.window: QtWidgets.QWidget | None = None
        self.placeholder = QtWidgets.QLabel(f"{title} is open in its own window; close it to bring it back here.")
        self.placeholder.setWordWrap(True)

    def toggle(self) -> None:
        if self.window is not None:
            self.window.close()
            return
        i = self.tabs.indexOf(self.panel)
        self.tabs.insertTab(i, self.placeholder, self.title)
        self.tabs.setCurrentIndex(i)
        self.window = w = QtWidgets.QWidget(self.tabs.window(), QtCore.Qt.WindowType.Window)  # closes with it
        w.setWindowTitle(f"Attention Studio — {self.title}")
        QtWidgets.QVBoxLayout(w).addWidget(self.panel)  # leaves the tab widget
        self.panel.show()  # the tab stack had hidden it
        w.installEventFilter(self)
        w.resize(900, 820)
        w.show()

    def eventFilter(self, obj, event) -> bool:
        if obj is self.window and event.type() == QtCore.QEvent.Type.Close:
            i = self.tabs.indexOf(self.placeholder)
            self.tabs.insertTab(i, self.panel, self.title)
            self.tabs.removeTab(self.tabs.indexOf(self.placeholder))
            self.tabs.setCurrentWidget(self.panel)
            self.window.removeEventFilter(self)
            self.window.deleteLater()
            self.window = None
        return False
