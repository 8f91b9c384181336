"""Widgets shared by the ablation and compare panels: maps side by side, a difference map with a
diverging colour map centred at 0, and panels that can leave the tab for a window of their own."""

from __future__ import annotations

import textwrap
import weakref

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from gui.state.compare_data import Comparison, HeadMap, map_arrays, position_labels
from gui.widgets.colormap import Colormap
from gui.widgets.heatmap import Heatmap

# blue (B < A) - white (0) - red (B > A); RdBu ends, symmetric around the middle
DIVERGING = Colormap.from_stops("red-blue", (0.0, (33, 102, 172)), (0.5, (247, 247, 247)), (1.0, (178, 24, 43)))
HINT = "hover a cell for its value (queries and keys numbered from 1)"
DETACH_TEXT = "Own window ⇱"  # every tab's button that opens it in a window of its own
HOME_ORDER: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # tab widget -> its tabs before one left


def replace_in_home_order(tabs, old, new) -> None:
    """``new`` takes ``old``'s place in the remembered tab order of ``tabs`` (a tab built late
    replaces its placeholder), so a detached panel still returns to its place."""
    order = HOME_ORDER.get(tabs)
    if order is not None:
        order[:] = [new if w is old else w for w in order]


def clear_map(m: Heatmap, text: str) -> None:
    """Empty ``m`` completely (image, mask overlay, cell values, title, ticks), then show ``text``:
    a map that no longer applies must never stay on screen under a new explanation."""
    m.drawn_args = None
    m.matrix, m.mask = np.zeros((0, 0)), None
    m.row_tokens, m.col_tokens = [], []
    m.matrix_image.set(np.zeros((0, 0)), None)
    m.values.clear()
    m.plot.setTitle("")
    m.set_empty(text)


class DiffHeatmap(Heatmap):
    """A :class:`Heatmap` of B − A: colour levels ``(−m, m)`` with m = max |B − A| over open
    cells (so 0 is white), the colour bar says so, the hover read-out names the difference."""

    EMPTY = "B − A appears here when both maps have the same shape and tokens."

    def __init__(self, parent=None) -> None:
        super().__init__(DIVERGING, parent)
        self.set_empty()

    def set_matrix(self, matrix, mask, row_tokens, col_tokens, title="", row_label="query", col_label="key") -> None:
        super().set_matrix(matrix, mask, row_tokens, col_tokens, title, row_label, col_label)
        values = np.asarray(matrix, dtype=np.float64)
        if mask is not None:
            values = values[~np.asarray(mask, dtype=bool)]
        m = float(np.abs(values).max()) if values.size else 0.0
        m = max(m, 1e-6)
        self.levels = (-m, m)
        self.matrix_image.image.setLevels(self.levels)
        self.colorbar.setLevels(self.levels)
        self.colorbar.axis.setLabel(f"B − A, centred at 0 (± {m:.3g})", **self._css(-1))
        self._draw_values()

    def _dark_text(self, matrix: np.ndarray) -> np.ndarray:
        """As :class:`Heatmap`, but the text is dark on the pale middle of the diverging map."""
        m = max(abs(self.levels[0]), abs(self.levels[1]), 1e-12)
        return np.abs(matrix) < 0.6 * m

    def set_colormap(self, cmap: Colormap) -> None:  # always diverging
        super().set_colormap(DIVERGING)

    def describe(self, row: int, col: int) -> str:
        return "B − A: " + super().describe(row, col)


def narrow_combo(combo: QtWidgets.QComboBox, chars: int = 8) -> None:
    """Let ``combo`` shrink to about ``chars`` characters in a narrow dock (its list still shows
    every item in full); in a layout with stretch it still takes the room there is."""
    combo.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(chars)


class MapRow(QtWidgets.QWidget):
    """Two maps (A, B) and optionally their difference, one hover line and one reason line.
    ``maps`` holds the :class:`Heatmap` s, left to right."""

    SIDE_BY_SIDE_PX = 260  # each map's width from which the maps stand side by side, else stacked

    def __init__(self, titles: tuple[str, str], with_diff: bool, parent=None) -> None:
        super().__init__(parent)
        cmap = Colormap.named("viridis")
        v = QtWidgets.QVBoxLayout(self)
        v.setContentsMargins(0, 0, 0, 0)
        row = self.row = QtWidgets.QBoxLayout(QtWidgets.QBoxLayout.Direction.LeftToRight)
        self.a, self.b = Heatmap(cmap), Heatmap(cmap)
        self.diff = DiffHeatmap() if with_diff else None
        self.maps = [m for m in (self.a, self.b, self.diff) if m is not None]
        self.titles = (*titles, "B − A")
        # what is drawn: (A, B, comparison) as last passed to show_pair; None when cleared
        self.shown: tuple[HeadMap | None, HeadMap | None, Comparison | None] | None = None
        self.hover = QtWidgets.QLabel(HINT)
        self.hover.setWordWrap(True)
        self.reason = QtWidgets.QLabel("")
        self.reason.setWordWrap(True)
        for m, t in zip(self.maps, (*titles, "B − A")):
            m.set_empty(f"{t}:\nnothing yet")
            m.setMinimumSize(160, 240)
            m.hovered.connect(lambda text: self.hover.setText(text or HINT))
            row.addWidget(m, 1)
        v.addLayout(row, 1)
        v.addWidget(self.hover)
        v.addWidget(self.reason)

    def resizeEvent(self, ev) -> None:
        """Side by side where every map gets :attr:`SIDE_BY_SIDE_PX`, one under another in a narrow
        dock (the width comes from the dock, so switching never feeds back into it)."""
        super().resizeEvent(ev)
        wide = self.width() >= self.SIDE_BY_SIDE_PX * len(self.maps)
        direction = QtWidgets.QBoxLayout.Direction.LeftToRight if wide else QtWidgets.QBoxLayout.Direction.TopToBottom
        if self.row.direction() != direction:
            self.row.setDirection(direction)

    def set_font(self, font: QtGui.QFont) -> None:
        for m in self.maps:
            m.set_font(font)

    def set_colormap(self, cmap: Colormap) -> None:
        """View → Colour map for A and B; the difference map keeps its diverging colours."""
        for m in (self.a, self.b):
            m.set_colormap(cmap)

    def set_scale(self, scale: str) -> None:
        """View → Colour scale ("fixed" or "per-map") for A and B, redrawn; the difference map
        keeps its levels ±max |B − A| (centred at 0)."""
        for m in (self.a, self.b):
            m.set_scale(scale)
        if self.shown is not None:
            self.show_pair(*self.shown)  # again: the two maps stay aligned on one grid

    def show_pair(self, a: HeadMap | None, b: HeadMap | None, comparison: Comparison | None = None) -> None:
        """Draw A and B (None: say why in that map) on one grid, and B − A where there is one."""
        self.shown = (a, b, comparison)
        for m, hm in ((self.a, a), (self.b, b)):
            if hm is None:
                clear_map(m, "this head does not exist in this run")
            else:
                m.set_matrix(hm.weights, hm.mask, hm.row_tokens, hm.col_tokens, hm.title, hm.row_label, hm.col_label)
        if a is not None and b is not None:  # aligned: the same number of cells per axis, cell i beside cell i
            rows = max(a.weights.shape[0], b.weights.shape[0], 1)
            cols = max(a.weights.shape[1], b.weights.shape[1], 1)
            for m in (self.a, self.b):
                m.view.setRange(QtCore.QRectF(0, 0, cols, rows), padding=0)
        if self.diff is None:
            return
        if comparison is not None and comparison.diff is not None:
            self.diff.set_matrix(
                comparison.diff,
                comparison.diff_mask,
                position_labels(a.row_tokens, b.row_tokens),
                position_labels(a.col_tokens, b.col_tokens),
                f"B − A, {a.title.split(' — ')[-1]}",
                a.row_label,
                a.col_label,
            )
            self.reason.setText(
                f"difference map: largest |B − A| = {comparison.max_abs:.4f} "
                f"(red: B attends more, blue: less){'; ' if comparison.reason else ''}"
                f"{comparison.reason}"
            )
        else:
            self.no_diff(comparison.reason if comparison is not None else "no difference map")

    def clear(self) -> None:
        """Empty every map (as before the first result) and the read-out lines."""
        self.shown = None
        for m, t in zip(self.maps, self.titles):
            clear_map(m, f"{t}:\nnothing yet")
        self.hover.setText(HINT)
        self.reason.setText("")

    def npz_arrays(self, prefix: str, names: tuple[str, str]) -> dict[str, np.ndarray]:
        """The maps drawn, for File → Export (.npz): :func:`gui.state.compare_data.map_arrays` of A and
        B under ``{prefix}{names[i]}``, and where B − A is drawn ``{prefix}diff`` ``[rows, cols]``
        (0 where masked), ``{prefix}diff_mask`` (True = masked in either run) and its axis labels.
        Empty when nothing is drawn."""
        if self.shown is None:
            return {}
        a, b, comparison = self.shown
        out: dict[str, np.ndarray] = {}
        for name, hm in zip(names, (a, b)):
            if hm is not None:
                out.update(map_arrays(f"{prefix}{name}", hm))
        if self.diff is not None and comparison is not None and comparison.diff is not None:
            out[f"{prefix}diff"] = comparison.diff
            out[f"{prefix}diff_mask"] = comparison.diff_mask
            out[f"{prefix}diff_row_tokens"] = np.array(position_labels(a.row_tokens, b.row_tokens), dtype=str)
            out[f"{prefix}diff_col_tokens"] = np.array(position_labels(a.col_tokens, b.col_tokens), dtype=str)
        return out

    def no_diff(self, why: str) -> None:
        """No difference map: the reason, wrapped, in its place and in full on the line below."""
        if self.diff is not None:
            clear_map(self.diff, textwrap.fill(why, 34))
        self.reason.setText(why)


def error_style(label: QtWidgets.QLabel, text: str, error: bool) -> None:
    """A status line: errors in dark red with ⚠, other messages in grey."""
    label.setText(("⚠ " if error else "") + text)
    label.setStyleSheet("color: #a01010;" if error else "color: #555555;")


class DetachablePanel(QtWidgets.QWidget):
    """A tab page that can open in a window of its own (more room for maps side by side) and goes
    back into its tab when that window closes. ``tab_title`` names it in both places."""

    def __init__(self, tab_title: str, parent=None) -> None:
        super().__init__(parent)
        self.tab_title = tab_title
        self.tabs: QtWidgets.QTabWidget | None = None
        self.detach_button = QtWidgets.QPushButton(DETACH_TEXT)
        self.detach_button.setToolTip("more room for the maps; close that window to put the panel back")
        self.detach_button.clicked.connect(self.toggle_window)

    def scrolled_body(self) -> QtWidgets.QVBoxLayout:
        """Give the panel one frameless scroll area (a small window or tab can still reach every
        part) and return the vertical layout of the widget inside it, for the panel's content."""
        outer = QtWidgets.QVBoxLayout(self)
        outer.setContentsMargins(2, 2, 2, 2)
        scroll = QtWidgets.QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        outer.addWidget(scroll)
        body = QtWidgets.QWidget()
        scroll.setWidget(body)
        v = QtWidgets.QVBoxLayout(body)
        v.setContentsMargins(2, 2, 2, 2)  # the panel fits a narrow dock
        return v

    @property
    def detached(self) -> bool:
        return self.isWindow()

    def toggle_window(self) -> None:
        if self.detached:
            self.close()
            return
        if self.tabs is None:
            return
        i = self.tabs.indexOf(self)
        if i >= 0:
            home = HOME_ORDER.get(self.tabs)
            if home is None or self not in home:  # the strip's order with every panel in its tab
                HOME_ORDER[self.tabs] = [self.tabs.widget(k) for k in range(self.tabs.count())]
            self.tabs.removeTab(i)
        self.setParent(self.tabs.window(), QtCore.Qt.WindowType.Window)  # closes with the main window
        self.setWindowTitle(f"Attention Studio — {self.tab_title}")
        self.detach_button.setText("Back into the tab")
        self.resize(1200, 820)
        self.show()

    def _home_index(self) -> int:
        """Where the panel goes back: its place in the strip's order before it left, counting only
        the tabs that are there now (so two panels returning in any order keep their order)."""
        home = HOME_ORDER.get(self.tabs) or []
        if self not in home:
            return self.tabs.count()
        before = home[: home.index(self)]
        return sum(1 for k in range(self.tabs.count()) if self.tabs.widget(k) in before)

    def closeEvent(self, ev) -> None:
        if self.detached and self.tabs is not None:
            ev.ignore()
            self.hide()
            self.setWindowFlag(QtCore.Qt.WindowType.Window, False)
            self.tabs.insertTab(self._home_index(), self, self.tab_title)
            self.tabs.setCurrentWidget(self)
            self.detach_button.setText(DETACH_TEXT)
            self.show()
            return
        super().closeEvent(ev)
