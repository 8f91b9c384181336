"""Small multiples: one thumbnail per (layer, head) — or per mask — with a click to enlarge."""

from __future__ import annotations

import re

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from gui.state.view_spec import Cell
from gui.widgets.colormap import Colormap
from gui.widgets.colour_scale import map_levels
from gui.widgets.downsample import all_pool, max_pool
from gui.widgets.labels import wrap_title
from gui.widgets.map_style import mask_overlay
from gui.widgets.matrix_image import MatrixImage
from gui.widgets.pg_config import no_background_cache
from gui.widgets.thumb_view import ThumbView
from gui.widgets.thumbnails import ThumbnailImage, colour_thumbnails

COMPACT_FROM = 24  # cells; a grid this large (e.g. 6 layers × 8 heads) uses row/column headers
_LAYER_HEAD = re.compile(r"^(L\d+) (H\d+)$")
DERIVED_RGB = "#8a4b00"  # titles of derived cells (gui/state/derived.py: "… (derived)"), never a head's colour


def is_derived_title(title: str) -> bool:
    """Derived cells (mean over heads, rollout) are titled "… (derived)" and come after the heads."""
    return title.endswith("(derived)")


def _pool_stacked(cells: list[Cell], targets: tuple) -> tuple[list[np.ndarray | None], list[bool | None]]:
    """Each cell's matrix max-pooled to its thumbnail's (rows, cols) pixels, or None where it fits,
    and whether that pooled map is all finite (None where not pooled: the cell is checked when shown).
    Cells of one shape and one thumbnail size (every head of a view) are pooled as one stack and
    checked in one call (the maximum of a bin with a NaN is NaN, so a NaN is never pooled away)."""
    groups: dict[tuple, list[int]] = {}
    for i, (cell, (px_rows, px_cols)) in enumerate(zip(cells, targets)):
        m = cell.matrix
        if m.size and (m.shape[0] > px_rows or m.shape[1] > px_cols):
            groups.setdefault((m.shape, px_rows, px_cols), []).append(i)
    out: list[np.ndarray | None] = [None] * len(cells)
    finite: list[bool | None] = [None] * len(cells)
    for (_shape, px_rows, px_cols), idx in groups.items():
        stack = max_pool(np.stack([cells[i].matrix for i in idx]), px_rows, px_cols)
        ok = np.isfinite(stack).all(axis=(1, 2))
        for j, i in enumerate(idx):
            out[i], finite[i] = stack[j], bool(ok[j])
    return out, finite


class _Layout:
    """One built grid layout: its GraphicsLayout ``ci`` and items, and what they last showed."""

    def __init__(self, ci: pg.GraphicsLayout) -> None:
        self.ci = ci
        self.images: list[MatrixImage] = []
        self.views: list[ThumbView] = []
        self.labels: list[pg.LabelItem] = []
        self.cell_labels: list[pg.LabelItem | None] = []  # per cell; None in a compact grid's head cells
        self.headers: list[pg.LabelItem] = []
        self.note: pg.LabelItem | None = None
        self.compact = False
        self.shape: tuple = (0, 0, False)
        self.label_text: dict[int, tuple] = {}
        self.framed: dict[int, bool] = {}


class HeadGrid(pg.GraphicsLayoutWidget):
    """A grid of thumbnails, ``n_cols`` per row. Emits ``clicked(key)`` for the chosen cell.

    Redraw reuses the ImageItems. Each grid shape (e.g. the encoder's, with its rollout cell, and
    the decoder's) is built once and kept, so switching views swaps layouts instead of rebuilding;
    :meth:`prepare` builds one ahead of its first result.
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

    def __init__(self, cmap: Colormap, parent=None) -> None:
        super().__init__(parent)
        self.cmap = cmap
        self.ci.setSpacing(2)
        no_background_cache(self)
        # No BSP index: after a beam path was chosen, switching views left a removed layout's items in
        # the scene's index, still drawn under the new one (rows and titles overlapping, exported so).
        # A grid is a few hundred items, all on screen: an index saves nothing here.
        self.scene().setItemIndexMethod(QtWidgets.QGraphicsScene.ItemIndexMethod.NoIndex)
        self._layouts: dict[tuple, _Layout] = {}  # grid shape -> its built layout (kept: switching is cheap)
        self._cur = _Layout(self.ci)
        self.keys: list[tuple] = []
        self.selected: tuple | None = None
        self.font = QtGui.QFont()
        self.cells: list[Cell] = []
        self.n_cols = 1
        self.pooled: list[tuple[int, int]] = []  # shape each thumbnail actually draws
        self._targets: tuple = ()
        self.scale = "fixed"  # or "per-map": each thumbnail spans its own min … max
        self._floor = (0, 0)  # the least (width, height) for the app font (set_min_size)

    # the shown layout's items (read-only views for callers and tests)
    images = property(lambda self: self._cur.images)
    views = property(lambda self: self._cur.views)
    labels = property(lambda self: self._cur.labels)
    cell_labels = property(lambda self: self._cur.cell_labels)
    headers = property(lambda self: self._cur.headers)
    note = property(lambda self: self._cur.note)
    compact = property(lambda self: self._cur.compact)
    layout_shape = property(lambda self: self._cur.shape)

    def shape_of(self, titles: list[str], n_cols: int) -> tuple:
        """The layout a grid of cells titled ``titles`` needs: (cells, columns, compact, heads).
        Compact from ``COMPACT_FROM`` head cells, or sooner where a title would not fit on one line
        above its thumbnail (a large font in a narrow grid)."""
        heads = [t for t in titles if not is_derived_title(t)]
        compact = (len(heads) >= COMPACT_FROM or self._titles_crowded(heads, n_cols)) and all(_LAYER_HEAD.match(t) for t in heads)
        return (len(titles), n_cols, compact, len(heads))

    def _titles_crowded(self, heads: list[str], n_cols: int) -> bool:
        """True when the widest head title, at the titles' font, is wider than a column."""
        if not heads or self.width() < 50:  # not laid out yet: decided again at the first result
            return False
        font = QtGui.QFont(self.font)
        font.setPointSize(self._label_pt())
        widest = max(QtGui.QFontMetrics(font).horizontalAdvance("▶ " + t) for t in heads) + 16  # mark, margins
        slack = 16 if self._cur.compact else 0  # back to titles only with room to spare: a scroll bar
        return widest + slack > (self.width() - 8) / max(n_cols, 1)  # coming or going never flips it

    def prepare(self, titles: list[str], n_cols: int, show: bool = False) -> None:
        """Build (once) the layout for cells titled ``titles`` without drawing, so the first
        result of that shape only fills images (e.g. every view kind's grid when a model loads).
        The shown layout stays shown, unless ``show``: then this one is shown, titled, with empty
        thumbnails (the placeholder before a first result, in the shape that result will have)."""
        shape = self.shape_of(titles, n_cols)
        if shape not in self._layouts:
            shown = self._cur
            self._build(*shape[:3], titles)
            if not show and shown.shape in self._layouts:
                self._show(shown)
        if not show:
            return
        self._show(self._layouts[shape])
        for label, view, title in zip(self.cell_labels, self.views, titles):
            if label is not None and self._cur.label_text.get(id(label), ("",))[0] != title:
                label.setText(title, color=DERIVED_RGB if is_derived_title(title) else "#333333", size=f"{self._label_pt()}pt")
                wrap_title(label, view.width() if view.width() > 10 else 80)  # never wider than its thumbnail
                self._cur.label_text[id(label)] = (title,)  # not a cell's text: set_cells sets its own
        self._fit_min_height()

    def _show(self, layout: _Layout) -> None:
        if layout is not self._cur:
            self.setCentralItem(layout.ci)
            self.ci, self._cur = layout.ci, layout
            layout.ci.layout.activate()  # geometry now: thumbnails' pixel sizes decide the pooling

    def _build(self, n: int, n_cols: int, compact: bool = False, titles: list[str] | None = None) -> None:
        ci = pg.GraphicsLayout()
        ci.setSpacing(2)
        lay = _Layout(ci)
        titles = titles or [""] * n
        n_heads = sum(not is_derived_title(t) for t in titles)
        head_rows = (n_heads + n_cols - 1) // n_cols
        lay.compact = compact
        if compact:  # header row (heads) and header column (layers); cells shift by one row/column
            size = f"{self._label_pt()}pt"
            for c in range(n_cols):
                lay.headers.append(ci.addLabel(_LAYER_HEAD.match(titles[c]).group(2), row=0, col=c + 1, size=size))
            for r in range(head_rows):
                lay.headers.append(ci.addLabel(_LAYER_HEAD.match(titles[r * n_cols]).group(1), row=r + 1, col=0, size=size))
            ci.layout.setColumnStretchFactor(0, 0)
        for i in range(n):
            r, c = divmod(i, n_cols)
            if compact and i < n_heads:
                view = ThumbView()
                ci.addItem(view, row=r + 1, col=c + 1)
                self._add_view(lay, view)
                lay.cell_labels.append(None)
                continue
            row0, col, span = 0, c, 1
            if i >= n_heads:  # derived cells: rows of their own below the heads (compact: two columns wide)
                span = self._derived_span(n_cols, compact)
                r, c = divmod(i - n_heads, n_cols // span)
                row0, col = (head_rows + 1, 1 + c * span) if compact else (2 * head_rows, c)
            label = ci.addLabel("", row=row0 + 2 * r, col=col, colspan=span, size="8pt")
            view = ThumbView()
            ci.addItem(view, row=row0 + 2 * r + 1, col=col, colspan=span)
            self._add_view(lay, view)
            lay.labels.append(label)
            lay.cell_labels.append(label)
        per_row = n_cols // self._derived_span(n_cols, compact)
        below = ((head_rows + 1) if compact else 2 * head_rows) + 2 * ((n - n_heads + per_row - 1) // per_row)
        lay.note = ci.addLabel("", row=below, col=0, colspan=n_cols + (1 if compact else 0), size=f"{self._label_pt()}pt")
        lay.shape = (n, n_cols, compact, n_heads)
        self._layouts[lay.shape] = lay
        self._show(lay)

    @staticmethod
    def _derived_span(n_cols: int, compact: bool) -> int:
        """Columns a derived cell spans: 2 in a compact grid of ≥ 4 columns (room for its title)."""
        return 2 if compact and n_cols >= 4 else 1

    def _add_view(self, lay: _Layout, view: ThumbView) -> None:
        view.setBackgroundColor((235, 235, 235))
        view.setMinimumHeight(self.thumb_min_px())  # never squeezed to nothing by its title
        im = MatrixImage(view, self.cmap, ThumbnailImage())  # fills [0, 1]², draws its hatch itself
        for item in im.items():  # the range is fixed: no view needs to hear of its geometry
            item.setFlag(item.GraphicsItemFlag.ItemSendsGeometryChanges, False)
        lay.images.append(im)
        lay.views.append(view)

    def _label_pt(self) -> int:
        """Titles and headers: two points under the app font, at most 14 pt (8 headers must fit
        across a thumbnail row even at presenter sizes)."""
        return min(max(self.font.pointSize() - 2, 7), 14)

    def set_font(self, font: QtGui.QFont) -> None:
        """Titles, headers and the note follow ``font`` (two points smaller); applied at the next
        :meth:`set_cells` (the layout is rebuilt)."""
        self.font = QtGui.QFont(font)
        self._layouts = {}  # every layout is rebuilt at its next use
        self._cur = _Layout(self._cur.ci)  # the shown one too (its items stay until then)

    def set_scale(self, scale: str) -> None:
        """ "fixed" [0, 1] or "per-map" colour levels (applied at the next :meth:`set_cells`)."""
        map_levels(np.zeros((1, 1)), None, scale)  # validates
        self.scale = scale

    def set_colormap(self, cmap: Colormap) -> None:
        self.cmap = cmap
        for lay in {id(x): x for x in (*self._layouts.values(), self._cur)}.values():
            for im in lay.images:
                im.set_colormap(cmap)

    def set_cells(self, cells: list[Cell], n_cols: int) -> None:
        """Show ``cells`` in a grid of ``n_cols`` columns (heads across, layers down)."""
        titles = [c.title for c in cells]
        shape = self.shape_of(titles, n_cols)
        relaid = self._cur.shape != shape  # another layout (or a new one): its height is measured again
        if shape in self._layouts:
            self._show(self._layouts[shape])
        else:
            self._build(*shape[:3], titles)
        self.keys = [c.key for c in cells]
        self.cells, self.n_cols = list(cells), n_cols
        self._targets = tuple(self._pixels(v) for v in self.views)
        hatches: dict[tuple, np.ndarray | None] = {}  # per shared (pooled) mask: its hatch, or None
        pooled_masks: dict[tuple, np.ndarray] = {}
        labels = self.cell_labels
        self.pooled = []
        most = (1, 1)
        pooled, finite = _pool_stacked(cells, self._targets)
        for cell, im, view, label, (px_rows, px_cols), small, ok in zip(
            cells, self.images, self.views, labels, self._targets, pooled, finite
        ):
            matrix, mask = cell.matrix, cell.mask
            if small is not None:
                r0, c0 = matrix.shape
                matrix = small
                if mask is not None:
                    key = (id(cell.mask), px_rows, px_cols)
                    if key not in pooled_masks:
                        pooled_masks[key] = all_pool(mask, px_rows, px_cols)
                    mask = pooled_masks[key]
                # an empty axis (no decoder step yet: 0 rows) pools nothing: count it as 1, never divide by 0
                most = max(most, (-(-r0 // max(matrix.shape[0], 1)), -(-c0 // max(matrix.shape[1], 1))))
            self.pooled.append(matrix.shape)
            overlay = None
            if mask is not None:  # cells of a view share one mask: check, pool and hatch it once (None: masks nothing)
                key = (id(cell.mask), mask.shape, px_rows, px_cols)
                if key not in hatches:
                    hatches[key] = mask_overlay(mask, (px_rows, px_cols)) if mask.any() else None
                overlay = hatches[key]
            masked = overlay is not None
            im.set(matrix, mask, overlay, levels=map_levels(matrix, mask, self.scale), unit=True, finite=ok, masked=masked)
            chosen = cell.key == self.selected
            if label is None:  # compact grid: a frame marks the chosen cell
                if self._cur.framed.get(id(view)) != chosen:
                    view.setBorder(pg.mkPen("#c0392b", width=3) if chosen else None)
                    self._cur.framed[id(view)] = chosen
                continue
            text = (("▶ " if chosen else "") + cell.title, chosen, self._label_pt())
            text = (*text, int(view.width()))
            if self._cur.label_text.get(id(label)) != text:  # setText re-lays out: skip when unchanged
                colour = "#c0392b" if chosen else DERIVED_RGB if is_derived_title(cell.title) else "#333333"
                label.setText(text[0], color=colour, size=f"{text[2]}pt")
                wrap_title(label, view.width() if view.width() > 10 else 80)  # never wider than its thumbnail
                self._cur.label_text[id(label)] = text
                relaid = True
        colour_thumbnails([im.image for im in self.images[: len(cells)]])  # all at once, not one by one at paint
        note = (
            ""
            if most == (1, 1)
            else f"downsampled: each thumbnail pixel shows the maximum of up to {most[0]} × {most[1]} cells "
            "(click to see every cell)"
        )
        if self.scale == "per-map":
            note = "colours: each thumbnail scaled to its own min … max" + (" · " + note if note else "")
        if self.note is not None and self.note.text != note:
            self.note.setText(note, size=f"{self._label_pt()}pt", color="#8a4b00")
            wrap_title(self.note, max(self.width() - 30, 100))  # a long note wraps, never widens the grid
            relaid = True
        if relaid:  # a step that changes only the images keeps the grid's height (measuring it costs ms)
            self._fit_min_height()

    def thumb_min_px(self) -> int:
        """The least height in pixels a thumbnail is given: about one text line of the app font."""
        return max(24, QtGui.QFontMetrics(self.font).height())

    def set_min_size(self, width: int, height: int) -> None:
        """The least size for the app font (:func:`gui.widgets.fonts.minimum_sizes`); the grid asks
        for more height where its titles and thumbnails need it (large fonts, many layers)."""
        self._floor = (width, height)
        self.setMinimumWidth(width)
        self._fit_min_height()

    def _fit_min_height(self) -> None:
        """Minimum height: the floor, or what every title (wrapped at today's width) plus a
        thumbnail of :meth:`thumb_min_px` per row takes, if more; a window too short for it
        scrolls (the central area is a :class:`~gui.widgets.fonts.FitScroll`) rather than
        squeezing the thumbnails to nothing."""
        floor = self._floor[1]
        content = self.ci.layout.effectiveSizeHint(QtCore.Qt.SizeHint.MinimumSize).height()
        margins = self.contentsMargins()
        need = max(floor, int(content) + margins.top() + margins.bottom() + 2 * self.frameWidth())
        if self.minimumHeight() != need:
            self.setMinimumHeight(need)

    def _pixels(self, view: ThumbView) -> tuple[int, int]:
        """Device pixels (rows, cols) a thumbnail has; huge before the first layout (no pooling)."""
        w, h = view.width(), view.height()
        if w < 4 or h < 4:
            return (10**6, 10**6)
        ratio = self.devicePixelRatioF()
        return (max(int(h * ratio), 1), max(int(w * ratio), 1))

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        QtCore.QTimer.singleShot(0, self, self._repool)  # dropped if the grid is gone by then

    def _repool(self) -> None:
        """After a resize, redraw if a thumbnail's pixel size changed (pooling depends on it)."""
        titled = [(lab, int(v.width())) for lab, v in zip(self.cell_labels, self.views) if lab is not None]
        if self.cells and (
            tuple(self._pixels(v) for v in self.views) != self._targets
            or any(self._cur.label_text.get(id(lab), (0,))[-1] != w for lab, w in titled)
        ):
            self.set_cells(self.cells, self.n_cols)

    def cell_at(self, scene_pos) -> tuple | None:
        for key, view in zip(self.keys, self.views):
            if view.sceneBoundingRect().contains(scene_pos):
                return key
        return None

    def mousePressEvent(self, ev) -> None:
        key = self.cell_at(self.mapToScene(ev.position().toPoint()))
        if key is not None:
            self.clicked.emit(key)
        super().mousePressEvent(ev)
