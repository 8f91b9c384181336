"""Small multiples: one thumbnail per (layer, head) — or per mask — with a click to enlarge."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from gui.widgets.downsample import all_pool, max_pool
from gui.widgets.heatmap import MatrixImage, map_levels, mask_overlay
from gui.widgets.labels import wrap_title


@dataclass
class Cell:
    """One thumbnail: ``matrix [rows, cols]``, ``mask`` (True = masked) or None, and a title."""

    title: str
    matrix: np.ndarray
    mask: np.ndarray | None
    key: tuple


COMPACT_FROM = 24  # cells; a grid this large (e.g. 6 layers × 8 heads) uses row/column headers
_LAYER_HEAD = re.compile(r"^(L\d+) (H\d+)$")
DERIVED_RGB = "#8a4b00"  # titles of derived cells (gui/state/derived.py: "… (derived)"), never a head's colour


def is_derived_title(title: str) -> bool:
    """Derived cells (mean over heads, rollout) are titled "… (derived)" and come after the heads."""
    return title.endswith("(derived)")


class HeadGrid(pg.GraphicsLayoutWidget):
    """A grid of thumbnails, ``n_cols`` per row. Emits ``clicked(key)`` for the chosen cell.

    Redraw reuses the ImageItems; it only rebuilds the layout when the grid's shape changes.
    Large layer × head grids (≥ ``COMPACT_FROM`` cells titled "L<i> H<j>", e.g. OPUS-MT's 6 × 8)
    are compact: one header row "H1 … H8" and one header column "L1 … L6" instead of a title
    over every thumbnail, so the thumbnails get the space; the chosen one gets a red frame.

    A map with more keys or queries than its thumbnail has device pixels is **max-pooled**
    (:func:`gui.widgets.downsample.max_pool`): every pixel shows the largest weight it covers, so a
    one-hot column never disappears; a note under the grid says so (``note.text``).

    Derived cells (titles ending "(derived)", after every head cell) start a row of their own
    and always keep a title (brown), also in a compact grid.
    """

    clicked = QtCore.Signal(object)

    def __init__(self, cmap: pg.ColorMap, parent=None) -> None:
        super().__init__(parent)
        self.cmap = cmap
        self.ci.setSpacing(2)
        self.images: list[MatrixImage] = []
        self.views: list[pg.ViewBox] = []
        self.labels: list[pg.LabelItem] = []
        self.cell_labels: list[pg.LabelItem | None] = []  # per cell; None in a compact grid's head cells
        self.keys: list[tuple] = []
        self.layout_shape: tuple = (0, 0, False)
        self.selected: tuple | None = None
        self.font = QtGui.QFont()
        self._label_text: dict[int, tuple] = {}
        self._ranged: dict[int, bool] = {}
        self.compact = False
        self.headers: list[pg.LabelItem] = []
        self._framed: dict[int, bool] = {}
        self.cells: list[Cell] = []
        self.n_cols = 1
        self.pooled: list[tuple[int, int]] = []  # shape each thumbnail actually draws
        self.note: pg.LabelItem | None = None
        self._targets: tuple = ()
        self.scale = "fixed"  # or "per-map": each thumbnail spans its own min … max

    def _build(self, n: int, n_cols: int, compact: bool = False, titles: list[str] | None = None) -> None:
        self.clear()
        self._label_text, self._ranged, self._framed = {}, {}, {}
        self.images, self.views, self.labels, self.headers = [], [], [], []
        self.cell_labels = []
        titles = titles or [""] * n
        n_heads = sum(not is_derived_title(t) for t in titles)
        head_rows = (n_heads + n_cols - 1) // n_cols
        self.compact = compact
        if compact:  # header row (heads) and header column (layers); cells shift by one row/column
            size = f"{self._label_pt()}pt"
            for c in range(n_cols):
                self.headers.append(self.addLabel(_LAYER_HEAD.match(titles[c]).group(2), row=0, col=c + 1, size=size))
            for r in range(head_rows):
                self.headers.append(self.addLabel(_LAYER_HEAD.match(titles[r * n_cols]).group(1), row=r + 1, col=0,
                                                  size=size))
            self.ci.layout.setColumnStretchFactor(0, 0)
        for i in range(n):
            r, c = divmod(i, n_cols)
            if compact and i < n_heads:
                view = self.addViewBox(row=r + 1, col=c + 1, lockAspect=False, enableMouse=False)
                self._add_view(view)
                self.cell_labels.append(None)
                continue
            row0, col, span = 0, c, 1
            if i >= n_heads:  # derived cells: rows of their own below the heads (compact: two columns wide)
                span = self._derived_span(n_cols, compact)
                r, c = divmod(i - n_heads, n_cols // span)
                row0, col = (head_rows + 1, 1 + c * span) if compact else (2 * head_rows, c)
            label = self.addLabel("", row=row0 + 2 * r, col=col, colspan=span, size="8pt")
            view = self.addViewBox(row=row0 + 2 * r + 1, col=col, colspan=span, lockAspect=False, enableMouse=False)
            self._add_view(view)
            self.labels.append(label)
            self.cell_labels.append(label)
        per_row = n_cols // self._derived_span(n_cols, compact)
        below = ((head_rows + 1) if compact else 2 * head_rows) + 2 * ((n - n_heads + per_row - 1) // per_row)
        self.note = self.addLabel("", row=below, col=0,
                                  colspan=n_cols + (1 if compact else 0), size=f"{self._label_pt()}pt")
        self.layout_shape = (n, n_cols, compact, n_heads)

    @staticmethod
    def _derived_span(n_cols: int, compact: bool) -> int:
        """Columns a derived cell spans: 2 in a compact grid of ≥ 4 columns (room for its title)."""
        return 2 if compact and n_cols >= 4 else 1

    def _add_view(self, view: pg.ViewBox) -> None:
        view.invertY(True)
        view.setMenuEnabled(False)
        view.setBackgroundColor((235, 235, 235))
        self.images.append(MatrixImage(view, self.cmap))
        self.views.append(view)

    def _label_pt(self) -> int:
        """Titles and headers: two points under the app font, at most 14 pt (8 headers must fit
        across a thumbnail row even at presenter sizes)."""
        return min(max(self.font.pointSize() - 2, 7), 14)

    def set_font(self, font: QtGui.QFont) -> None:
        """Titles, headers and the note follow ``font`` (two points smaller); applied at the next
        :meth:`set_cells` (the layout is rebuilt)."""
        self.font = QtGui.QFont(font)
        self.layout_shape = (0, 0, False)
        self._label_text = {}

    def set_scale(self, scale: str) -> None:
        """"fixed" [0, 1] or "per-map" colour levels (applied at the next :meth:`set_cells`)."""
        map_levels(np.zeros((1, 1)), None, scale)  # validates
        self.scale = scale

    def set_colormap(self, cmap: pg.ColorMap) -> None:
        self.cmap = cmap
        for im in self.images:
            im.set_colormap(cmap)

    def set_cells(self, cells: list[Cell], n_cols: int) -> None:
        """Show ``cells`` in a grid of ``n_cols`` columns (heads across, layers down)."""
        titles = [c.title for c in cells]
        heads = [t for t in titles if not is_derived_title(t)]
        compact = len(heads) >= COMPACT_FROM and all(_LAYER_HEAD.match(t) for t in heads)
        if self.layout_shape != (len(cells), n_cols, compact, len(heads)):
            self._build(len(cells), n_cols, compact, titles)
        self.keys = [c.key for c in cells]
        self.cells, self.n_cols = list(cells), n_cols
        self._targets = tuple(self._pixels(v) for v in self.views)
        overlay_cache: dict[tuple, np.ndarray] = {}
        labels = self.cell_labels
        self.pooled = []
        most = (1, 1)
        for cell, im, view, label, (px_rows, px_cols) in zip(cells, self.images, self.views, labels, self._targets):
            matrix, mask = cell.matrix, cell.mask
            if matrix.size and (matrix.shape[0] > px_rows or matrix.shape[1] > px_cols):
                r0, c0 = matrix.shape
                matrix = max_pool(matrix, px_rows, px_cols)
                mask = None if mask is None else all_pool(mask, px_rows, px_cols)
                # an empty axis (no decoder step yet: 0 rows) pools nothing: count it as 1, never divide by 0
                most = max(most, (-(-r0 // max(matrix.shape[0], 1)), -(-c0 // max(matrix.shape[1], 1))))
            self.pooled.append(matrix.shape)
            overlay = None
            if mask is not None and mask.any():
                overlay = overlay_cache.get((id(cell.mask), mask.shape))
                if overlay is None:
                    overlay = overlay_cache[(id(cell.mask), mask.shape)] = mask_overlay(mask)
            shape_before = im.shape
            im.set(matrix, mask, overlay, levels=map_levels(matrix, mask, self.scale))
            rows, cols = matrix.shape
            if im.shape != shape_before or not self._ranged.get(id(view)):
                view.setRange(QtCore.QRectF(0, 0, max(cols, 1), max(rows, 1)), padding=0)
                self._ranged[id(view)] = True
            chosen = cell.key == self.selected
            if label is None:  # compact grid: a frame marks the chosen cell
                if self._framed.get(id(view)) != chosen:
                    view.setBorder(pg.mkPen("#c0392b", width=3) if chosen else None)
                    self._framed[id(view)] = chosen
                continue
            text = (("▶ " if chosen else "") + cell.title, chosen, self._label_pt())
            text = (*text, int(view.width()))
            if self._label_text.get(id(label)) != text:  # setText re-lays out: skip when unchanged
                colour = "#c0392b" if chosen else DERIVED_RGB if is_derived_title(cell.title) else "#333333"
                label.setText(text[0], color=colour, size=f"{text[2]}pt")
                wrap_title(label, view.width() if view.width() > 10 else 80)  # never wider than its thumbnail
                self._label_text[id(label)] = text
        note = ("" if most == (1, 1) else
                f"downsampled: each thumbnail pixel shows the maximum of up to {most[0]} × {most[1]} cells "
                "(click to see every cell)")
        if self.scale == "per-map":
            note = "colours: each thumbnail scaled to its own min … max" + (" · " + note if note else "")
        if self.note is not None and self.note.text != note:
            self.note.setText(note, size=f"{self._label_pt()}pt", color="#8a4b00")
            wrap_title(self.note, max(self.width() - 30, 100))  # a long note wraps, never widens the grid

    def _pixels(self, view: pg.ViewBox) -> tuple[int, int]:
        """Device pixels (rows, cols) a thumbnail has; huge before the first layout (no pooling)."""
        w, h = view.width(), view.height()
        if w < 4 or h < 4:
            return (10**6, 10**6)
        ratio = self.devicePixelRatioF()
        return (max(int(h * ratio), 1), max(int(w * ratio), 1))

    def resizeEvent(self, ev) -> None:  # noqa: N802 (Qt naming)
        super().resizeEvent(ev)
        QtCore.QTimer.singleShot(0, self._repool)

    def _repool(self) -> None:
        """After a resize, redraw if a thumbnail's pixel size changed (pooling depends on it)."""
        titled = [(lab, int(v.width())) for lab, v in zip(self.cell_labels, self.views) if lab is not None]
        if self.cells and (tuple(self._pixels(v) for v in self.views) != self._targets
                           or any(self._label_text.get(id(lab), (0,))[-1] != w for lab, w in titled)):
            self._ranged = {}
            self.set_cells(self.cells, self.n_cols)

    def cell_at(self, scene_pos) -> tuple | None:
        for key, view in zip(self.keys, self.views):
            if view.sceneBoundingRect().contains(scene_pos):
                return key
        return None

    def mousePressEvent(self, ev) -> None:  # noqa: N802 (Qt naming)
        key = self.cell_at(self.mapToScene(ev.position().toPoint()))
        if key is not None:
            self.clicked.emit(key)
        super().mousePressEvent(ev)
