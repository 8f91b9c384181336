"""The enlarged attention map: rows = queries, columns = keys (y axis downwards), token ticks on
both axes, a colour bar, each cell's value printed in small maps, and a hover read-out.

Weights are drawn with fixed colour levels [0, 1] or, for contrast, scaled to the map's own
range (the colour bar then shows that range and says so); masked cells (True = masked) are covered
by a hatched grey overlay so they never look like a merely small weight. The ImageItem holds
exactly the attention matrix it shows (``heatmap.image.image``). The parts live beside it: the
image and its hatch in :mod:`gui.widgets.matrix_image`, colour levels and the colour bar in
:mod:`gui.widgets.colour_scale`, the printed values in :mod:`gui.widgets.cell_values`.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from gui.state.view_data import quote
from gui.widgets.cell_values import VALUES_UP_TO, CellValues, cell_text, value_font
from gui.widgets.colormap import Colormap, as_pg
from gui.widgets.colour_scale import colour_bar, map_levels
from gui.widgets.labels import no_si_prefix, token_axes, wrap_title
from gui.widgets.map_style import LEGEND
from gui.widgets.matrix_image import MatrixImage
from gui.widgets.pg_config import configure, no_background_cache


class Heatmap(pg.GraphicsLayoutWidget):
    """The enlarged map: token ticks on both axes (thinned, never overlapping), a colour bar
    (fixed [0, 1] or the map's own range, labelled) and a hover read-out.

    Signals: ``hovered(str)`` with "query i ⟨x⟩ → key j ⟨y⟩: weight" (1-based, as layers and
    heads), or "" when the pointer leaves or a new map is shown; ``row_clicked(int)`` with the
    row (0-based query) of a click inside the map.
    """

    hovered = QtCore.Signal(str)
    row_clicked = QtCore.Signal(int)
    EMPTY = "Type Korean above and press Enter:\nthe attention maps appear here."

    def __init__(self, cmap: Colormap, parent=None) -> None:
        configure()  # white background, row-major images: the view reads them as it is built
        super().__init__(parent)
        self.cmap = cmap  # for copies laid out at another size (gui/export/map_image.py)
        self.plot = self.addPlot(row=0, col=0, axisItems=token_axes("left", "bottom"), enableMenu=False)  # none built
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.invertY(True)  # row 0 (first query) at the top
        no_si_prefix(self.plot)
        no_background_cache(self)
        self.view = self.plot.getViewBox()
        self.matrix_image = MatrixImage(self.view, cmap)
        self.colorbar = colour_bar((0, 1), cmap)
        self.colorbar.setImageItem(self.matrix_image.image)
        self.addItem(self.colorbar, row=0, col=1)
        self.matrix: np.ndarray = np.zeros((0, 0))
        self.mask: np.ndarray | None = None
        self.row_tokens: list[str] = []
        self.col_tokens: list[str] = []
        self.scale = "fixed"
        self.levels: tuple[float, float] = (0.0, 1.0)
        self.show_values = True
        self.shrink_values = False  # Present mode: values shrink to fit small cells (costs paint time per map)
        self.mask_mode = False
        self.font = QtGui.QFont()
        self.drawn_args: tuple | None = None  # set_matrix's arguments of the map shown
        self.mask_args: tuple | None = None  # set_mask_matrix's arguments, in mask mode
        self._decorated: dict[str, tuple] = {}  # axis labels, title, colour bar label as last set
        self.computing = False
        self._computing_label: QtWidgets.QLabel | None = None
        self.placeholder = pg.TextItem(self.EMPTY, color="#666666", anchor=(0.5, 0.5))
        self.view.addItem(self.placeholder)
        self.values = CellValues()  # every cell's printed value, one item
        self.view.addItem(self.values)
        self.scene().sigMouseMoved.connect(self._on_mouse)
        self.scene().sigMouseClicked.connect(self._on_click)
        self.view.sigResized.connect(self._wrap_title)
        self.view.sigResized.connect(lambda *_: self._draw_values())
        self.set_empty()

    @property
    def image(self) -> pg.ImageItem:
        return self.matrix_image.image

    def set_computing(self, on: bool, text: str = "computing …") -> None:
        """While the map's next content is computed (a step, a lecture page, a beam search), dim the
        map and its colour bar and say so in a line at the top left, so what is on screen is never
        taken for the new result; off again once the new map is drawn."""
        self.computing = bool(on)
        for item in (self.plot, self.colorbar):
            item.setOpacity(0.3 if on else 1.0)
        if self._computing_label is None:
            self._computing_label = QtWidgets.QLabel(self)
            self._computing_label.setStyleSheet("background: rgba(255, 255, 255, 220); color: #8a4b00; padding: 2px 6px;")
        label = self._computing_label
        label.setFont(self.font)
        label.setText(text)
        label.adjustSize()
        label.move(8, 8)
        label.setVisible(bool(on))
        if on:
            label.raise_()

    def set_empty(self, text: str | None = None) -> None:
        """Before the first result: no axes, no colour bar, only a hint (nothing meaningless)."""
        self._decorated = {}  # labels and title are set afresh with the next map
        for name in ("left", "bottom"):
            self.plot.hideAxis(name)
        self.colorbar.hide()
        self.placeholder.setText(text or self.EMPTY)
        self.placeholder.setPos(0.5, 0.5)
        self.placeholder.show()
        self.view.setRange(QtCore.QRectF(0, 0, 1, 1), padding=0)

    def set_colormap(self, cmap: Colormap) -> None:
        self.cmap = cmap
        self.matrix_image.set_colormap(cmap)
        self.colorbar.setColorMap(as_pg(cmap))

    def set_font(self, font: QtGui.QFont) -> None:
        """Every text of the map follows ``font``: ticks, axis titles, title, colour bar, cell values."""
        self.font = QtGui.QFont(font)
        for name in ("left", "bottom"):
            self.plot.getAxis(name).setStyle(tickFont=font)
        metrics = QtGui.QFontMetricsF(font)
        half = int(metrics.height() / 2) + 2  # the end labels (0, 1.0) reach half a line past the bar's ends
        self.colorbar.axis.setStyle(tickFont=font, hideOverlappingLabels=max(15, half))  # 15: pyqtgraph's default
        self.colorbar.layout.setContentsMargins(0, half, 0, half)  # and the bar keeps that room inside the view
        self.colorbar.axis.setWidth(int(metrics.horizontalAdvance("0.0000") + 12))
        self.colorbar.axis.label.setFont(font)
        self.placeholder.setFont(font)
        self._redraw()

    def set_scale(self, scale: str) -> None:
        """ "fixed" ([0, 1]) or "per-map" (the shown map's own min … max). Raises ValueError otherwise."""
        map_levels(np.zeros((1, 1)), None, scale)  # validates
        self.scale = scale
        self._redraw()

    def set_show_values(self, on: bool) -> None:
        self.show_values = bool(on)
        self._redraw()

    def _redraw(self) -> None:
        """Draw the current map again (after a font or scale change), in the same mode."""
        if self.mask_mode:
            self.set_mask_matrix(*self.mask_args)
        elif self.drawn_args is not None:
            self.set_matrix(*self.drawn_args)

    def _decorate(self, part: str, text: str, apply) -> None:
        """Call ``apply()`` (set an axis label, the title or the colour bar's label) unless ``part``
        already shows ``text`` at the current font: pyqtgraph re-lays out the whole plot after each
        such call, which painted the map a second time after every step."""
        key = (text, self.font.toString())
        if self._decorated.get(part) != key:
            apply()
            self._decorated[part] = key

    def _css(self, delta: int = 0) -> dict:
        return {"font-size": f"{max(self.font.pointSize() + delta, 6)}pt"}

    def set_matrix(
        self,
        matrix: np.ndarray,
        mask: np.ndarray | None,
        row_tokens: list[str],
        col_tokens: list[str],
        title: str = "",
        row_label: str = "query",
        col_label: str = "key",
    ) -> None:
        """Show ``matrix [rows, cols]`` with one tick per token (row i at y = i + 0.5)."""
        self.drawn_args = (matrix, mask, row_tokens, col_tokens, title, row_label, col_label)
        self.mask_mode = False
        self.matrix, self.mask = matrix, mask
        self.row_tokens, self.col_tokens = list(row_tokens), list(col_tokens)
        self.levels = map_levels(matrix, mask, self.scale)
        self.matrix_image.set(matrix, mask, levels=self.levels)
        if tuple(self.colorbar.levels()) != tuple(self.levels):  # else its axis would be drawn again for nothing
            self.colorbar.setLevels(self.levels)
        lo, hi = self.levels
        bar = "weight, fixed [0, 1]" if self.scale == "fixed" else f"per-map range {lo:.3g} … {hi:.3g}"
        self._decorate("bar", bar, lambda: self.colorbar.axis.setLabel(bar, **self._css(-1)))
        self.colorbar.show()
        self.placeholder.hide()
        rows, cols = matrix.shape
        for name in ("left", "bottom"):
            self.plot.showAxis(name)
        self.plot.getAxis("left").setTicks([[(i + 0.5, t) for i, t in enumerate(self.row_tokens)]])
        self.plot.getAxis("bottom").setTicks([[(j + 0.5, t) for j, t in enumerate(self.col_tokens)]])
        self._decorate("left", row_label, lambda: self.plot.setLabel("left", f"{row_label} (rows)", **self._css()))
        self._decorate("bottom", col_label, lambda: self.plot.setLabel("bottom", f"{col_label} (columns)", **self._css()))
        self._decorate(
            "title", title, lambda: (self.plot.setTitle(title, size=f"{self.font.pointSize() + 1}pt"), self._wrap_title())
        )
        self.view.setRange(QtCore.QRectF(0, 0, max(cols, 1), max(rows, 1)), padding=0)
        self.view.updateMatrix()  # now, not while painting: a change made during a paint paints the map again
        self._draw_values()
        self.hovered.emit("")

    def set_mask_matrix(self, image: np.ndarray, row_tokens: list[str], col_tokens: list[str], title: str) -> None:
        """A mask the model was given (1 = masked, 0 = may attend, NaN = key not computed yet,
        hatched) with the two-colour legend in place of a colour bar (use the mask colour map)."""

        image = np.asarray(image, dtype=np.float32)
        remask = (image, row_tokens, col_tokens, title)
        absent = np.isnan(image)
        self.set_matrix(
            image,
            absent if absent.any() else None,
            row_tokens,
            col_tokens,
            f"{title}<br><span style='font-size:{max(self.font.pointSize() - 1, 6)}pt'>{LEGEND}</span>",
        )
        self.mask_mode, self.mask_args = True, remask
        self.levels = (0.0, 1.0)  # a mask is 0/1 whatever the colour scale
        self.matrix_image.image.setLevels(self.levels)
        self.colorbar.hide()
        self._wrap_title()
        self._draw_values()

    def _draw_values(self) -> None:
        """Print each cell's value in small maps (≤ VALUES_UP_TO per side); masked cells say "–"."""
        rows, cols = self.matrix.shape
        small = 0 < rows <= VALUES_UP_TO and 0 < cols <= VALUES_UP_TO
        font = None
        if self.show_values and not self.mask_mode and small:
            cell_w, cell_h = self.view.width() / max(cols, 1), self.view.height() / max(rows, 1)
            font = value_font(self.font, cell_w, cell_h, shrink=self.shrink_values)
        if font is None:
            self.values.clear()
            return
        matrix = np.asarray(self.matrix, dtype=np.float64)
        masked = np.zeros(matrix.shape, dtype=bool) if self.mask is None else np.asarray(self.mask, dtype=bool)
        texts = [
            "–" if m or not np.isfinite(v) else cell_text(v)  # never "nan" on screen
            for v, m in zip(matrix.ravel().tolist(), masked.ravel().tolist())
        ]
        self.values.set_cells(texts, self._dark_text(matrix) | masked, font)

    def _dark_text(self, matrix: np.ndarray) -> np.ndarray:
        """``[rows, cols]`` bool: cells whose value is printed dark (on a bright colour)."""
        lo, hi = self.levels
        if hi <= lo:
            return np.zeros(matrix.shape, dtype=bool)
        return (matrix - lo) / (hi - lo) > 0.6

    def describe(self, row: int, col: int) -> str:
        """Read-out for one cell (0-based indices in, 1-based numbers out, as layers and heads):
        "query 1 ⟨x⟩ → key 2 ⟨y⟩: 0.1234" (or "masked")."""
        value = float(self.matrix[row, col])
        masked = self.mask is not None and bool(self.mask[row, col])
        q = self.row_tokens[row] if row < len(self.row_tokens) else "?"
        k = self.col_tokens[col] if col < len(self.col_tokens) else "?"
        if self.mask_mode:
            what = (
                "key not computed yet (nothing to mask)"
                if np.isnan(value)
                else "True: masked (may not attend)"
                if value == 1
                else "False: may attend"
            )
        else:
            what = "masked (may not attend)" if masked else f"{value:.4f}"
        return f"query {row + 1} {quote(q)} → key {col + 1} {quote(k)}: {what}"

    def _on_mouse(self, pos) -> None:
        if self.matrix.size == 0 or not self.view.sceneBoundingRect().contains(pos):
            self.hovered.emit("")
            return
        p = self.view.mapSceneToView(pos)
        row, col = int(np.floor(p.y())), int(np.floor(p.x()))
        if 0 <= row < self.matrix.shape[0] and 0 <= col < self.matrix.shape[1]:
            self.hovered.emit(self.describe(row, col))
        else:
            self.hovered.emit("")

    def _on_click(self, ev) -> None:
        pos = ev.scenePos()
        if self.matrix.size == 0 or not self.view.sceneBoundingRect().contains(pos):
            return
        row = int(np.floor(self.view.mapSceneToView(pos).y()))
        if 0 <= row < self.matrix.shape[0]:
            self.row_clicked.emit(row)

    def _wrap_title(self, *_) -> None:
        """The title spans the plot area only: wrap it to the view's width."""
        least = 14 * QtGui.QFontMetricsF(self.font).averageCharWidth()  # never one syllable per line
        wrap_title(self.plot.titleLabel, max(self.view.width(), least))

    def leaveEvent(self, ev) -> None:
        self.hovered.emit("")
        super().leaveEvent(ev)
