"""Attention heatmaps: rows = queries, columns = keys (ImageItem row-major, y axis downwards).

Weights are drawn with fixed colour levels [0, 1] or, for contrast, scaled to the map's own
range (the colour bar then shows that range and says so); masked cells (True = masked) are covered
by a hatched grey overlay so they never look like a merely small weight. The ImageItem holds
exactly the attention matrix it shows (``heatmap.image.image``).
"""

from __future__ import annotations

import functools

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from gui.state.view_data import quote
from gui.widgets.cell_values import CellValues
from gui.widgets.colormap import Colormap, as_pg
from gui.widgets.labels import no_si_prefix, token_axes, wrap_title
from gui.widgets.map_style import LEGEND, hatch_size, hatch_stripes
from gui.widgets.pg_config import configure, no_background_cache
from gui.widgets.thumbnails import HatchImage, MapImage

COLORMAPS = {"viridis": "viridis", "cividis (colour-blind safe)": "cividis", "inferno": "inferno"}
VALUES_UP_TO = 16  # maps with at most this many rows and columns can print each cell's value
VALUE_MIN_PT = 8  # with shrink_values, cell values shrink to fit their cells down to this size
# the overlay's colours (RGBA as one uint32 each): transparent, masked, masked on a stripe
_OVERLAY_WORDS = np.array([[0, 0, 0, 0], [215, 215, 215, 255], [120, 120, 120, 255]], dtype=np.uint8).view(np.uint32).ravel()
SCALES = {"fixed": "fixed [0, 1]", "per-map": "per map (min … max)"}
# colour-map entries: over 256, pyqtgraph maps the weights to RGBA with numpy; with 256 or fewer it
# builds an indexed image's colour table in Python (256 qRgb calls) at every render of every map
LUT_POINTS = 512


_UNIT_RECT = QtCore.QRectF(0, 0, 1, 1)  # where a thumbnail's map is placed (read, never changed)


@functools.lru_cache(maxsize=64)
def lookup_table(cmap: Colormap) -> np.ndarray:
    """``cmap``'s colour table of ``LUT_POINTS`` entries, the same array for the same colour map
    (the grid's thumbnails then share one table, and are coloured as one group per step)."""
    return cmap.lookup_table(LUT_POINTS)


def colour_bar(values: tuple[float, float], cmap: Colormap) -> pg.ColorBarItem:
    """A non-interactive colour bar (``values`` = its first levels) whose tick numbers are the
    values themselves: pyqtgraph's automatic SI prefix is off, else a per-map bar up to 0.02
    reads 10 … 20 with a small "(x0.001)" in its label once the label is shown."""
    bar = pg.ColorBarItem(values=values, colorMap=as_pg(cmap), interactive=False, width=14)
    bar.axis.enableAutoSIPrefix(False)
    return bar


def map_levels(matrix: np.ndarray, mask: np.ndarray | None, scale: str) -> tuple[float, float]:
    """Colour levels: ``(0, 1)`` for "fixed"; for "per-map" the min and max of the cells that are
    not masked (True = masked), widened to a non-empty interval. A constant map (every visible cell
    the same weight, e.g. a query row with one key) is widened downwards, so it is drawn in the top
    colour, as its one value is also its maximum, never in the colour of 0.
    Raises ValueError for an unknown scale."""
    if scale == "fixed":
        return (0.0, 1.0)
    if scale != "per-map":
        raise ValueError(f"unknown colour scale {scale!r}; choose one of {', '.join(SCALES)}")
    values = np.asarray(matrix, dtype=np.float64)
    if mask is not None:
        values = values[~np.asarray(mask, dtype=bool)]
    values = values[np.isfinite(values)]
    if values.size == 0:
        return (0.0, 1.0)
    lo, hi = float(values.min()), float(values.max())
    return (lo, hi) if hi > lo else (hi - 1e-6, hi)


def mask_overlay(mask: np.ndarray, pixels: tuple[int, int] | None = None) -> np.ndarray:
    """RGBA overlay ``[rows·h, cols·h, 4]``: hatched grey on masked cells, transparent elsewhere.

    h is :func:`hatch_size`, or, given the ``pixels`` (rows, cols) the map is drawn on, at most as
    many overlay pixels per cell as the map has screen pixels per cell (at least 1): a thumbnail's
    overlay is then drawn about 1:1, its stripes one screen pixel wide, instead of an overlay 16
    times the thumbnail's area being scaled down (and aliased) at every redraw."""
    rows, cols = mask.shape
    h = hatch_size(rows, cols)
    if pixels is not None:
        h = max(1, min(h, pixels[0] // max(rows, 1), pixels[1] // max(cols, 1)))
    big = np.repeat(np.repeat(np.asarray(mask, dtype=np.uint8), h, 0), h, 1)  # 1 on masked pixels
    shade = big + (big & hatch_stripes(*big.shape))  # 0 not masked, 1 masked, 2 masked stripe
    return np.take(_OVERLAY_WORDS, shade).view(np.uint8).reshape(*big.shape, 4)  # one 4-byte gather per pixel


class MatrixImage:
    """An ImageItem (weights, levels [0, 1]) plus a mask overlay, placed in ``view``; ``image`` and
    ``overlay``: the (row-major) items to use. A :class:`gui.widgets.thumbnails.ThumbnailImage`
    (a thumbnail, ``set(..., unit=True)``) draws its hatch itself: ``overlay`` is then None.
    ``view``: a ``pg.ViewBox`` or a :class:`gui.widgets.thumb_view.ThumbView` (anything with ``addItem``)."""

    def __init__(self, view, cmap: Colormap, image: pg.ImageItem | None = None, overlay: pg.ImageItem | None = None) -> None:
        self.image = image if image is not None else MapImage()
        # an image item that draws the hatch itself (gui.widgets.thumbnails.ThumbnailImage) needs no overlay item
        own_hatch = overlay is None and getattr(self.image, "draws_hatch", False)
        self.overlay = None if own_hatch else overlay if overlay is not None else HatchImage()
        self.image.setLookupTable(lookup_table(cmap))
        view.addItem(self.image)
        if self.overlay is not None:
            view.addItem(self.overlay)
        self.shape: tuple[int, int] = (0, 0)
        self._placed: dict[int, tuple] = {}  # id(item) -> (rect, image shape) it was last placed with

    def _place(self, item: pg.ImageItem, rect: QtCore.QRectF, shape: tuple) -> None:
        """``item.setRect(rect)`` unless it already spans ``rect`` with an image of ``shape`` (its
        transform depends on both; recomputing it for every thumbnail of every step costs ms)."""
        key = rect.getRect() if getattr(item, "fills_unit", False) else (rect.getRect(), tuple(shape))  # UnitImage
        if self._placed.get(id(item)) != key:
            item.setRect(rect)
            self._placed[id(item)] = key

    def set_colormap(self, cmap: Colormap) -> None:
        self.image.setLookupTable(lookup_table(cmap))

    def set(
        self,
        matrix: np.ndarray,
        mask: np.ndarray | None,
        overlay: np.ndarray | None = None,
        levels: tuple[float, float] = (0.0, 1.0),
        unit: bool = False,
        *,
        finite: bool | None = None,
        masked: bool | None = None,
    ) -> None:
        """Show ``matrix [rows, cols]`` (float) with colour ``levels`` (default the fixed [0, 1]);
        ``mask`` same shape, True = masked. Cell (r, c) covers [c, c + 1] × [r, r + 1] in the view,
        or with ``unit`` the whole map covers [0, 1] × [0, 1] whatever its shape (a thumbnail: its
        view's range never changes as a decoder map grows by a row per step).

        ``finite`` (every weight is finite) and ``masked`` (``mask`` masks some cell), where the
        caller already knows them (a grid checks a stack of maps, or one shared mask, once), skip
        checking them again here; None: checked here."""
        matrix = np.asarray(matrix, dtype=np.float32)
        if not (np.isfinite(matrix).all() if finite is None else finite):
            matrix = np.nan_to_num(matrix, nan=0.0)  # never NaN on screen
        rows, cols = matrix.shape
        self.shape = (rows, cols)
        if rows == 0 or cols == 0:
            self.image.clear()
            self._show_hatch(None)
            self._placed = {}
            return
        rect = _UNIT_RECT if unit else QtCore.QRectF(0, 0, cols, rows)
        if unit and hasattr(self.image, "set_map"):  # a thumbnail: the short path
            self.image.set_map(matrix, levels)
        else:
            self.image.setImage(matrix, levels=levels, autoLevels=False)
        self._place(self.image, rect, (rows, cols))
        if mask is not None and (mask.any() if masked is None else masked):
            self._show_hatch(overlay if overlay is not None else mask_overlay(mask), rect)
        else:
            self._show_hatch(None)

    def _show_hatch(self, pattern: np.ndarray | None, rect: QtCore.QRectF | None = None) -> None:
        if self.overlay is None:
            self.image.set_hatch(pattern)
        elif pattern is None:
            self.overlay.hide()
        else:
            self.overlay.setImage(pattern, autoLevels=False)
            self._place(self.overlay, rect, pattern.shape[:2])
            self.overlay.show()

    @property
    def hatch(self) -> np.ndarray | None:
        """The hatch overlay drawn over the map now (RGBA uint8 ``[rows·h, cols·h, 4]``), or None."""
        if self.overlay is None:
            return self.image.hatch
        return self.overlay.image if self.overlay.isVisible() and self.overlay.image is not None else None

    def items(self) -> list[pg.ImageItem]:
        """The graphics items it draws with: the image, and the overlay where there is one."""
        return [self.image] if self.overlay is None else [self.image, self.overlay]


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
            font = self._value_font(self.view.width() / max(cols, 1), self.view.height() / max(rows, 1))
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

    def _value_font(self, cell_w: float, cell_h: float) -> QtGui.QFont | None:
        """The map's font, or (``shrink_values``) the largest smaller one down to VALUE_MIN_PT, at which "0.00" fits
        a cell ``cell_w`` × ``cell_h`` pixels; None when not even that fits (no values then:
        never a value wider than its cell)."""
        font = QtGui.QFont(self.font)
        for pt in range(self.font.pointSize(), (VALUE_MIN_PT if self.shrink_values else self.font.pointSize()) - 1, -1):
            font.setPointSize(pt)
            fm = QtGui.QFontMetricsF(font)
            if cell_w >= fm.horizontalAdvance("0.00") + 4 and cell_h >= fm.height():
                return font
        return None

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


def cell_text(v: float) -> str:
    """A weight as printed in its cell: two decimals, the leading 0 dropped (".25"); values that
    round to 1.00 read "1.0", never ".00"."""
    text = f"{v:.2f}"
    return text[1:] if text.startswith("0.") else "1.0" if text == "1.00" else text
