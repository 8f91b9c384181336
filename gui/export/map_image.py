"""Export the enlarged map with every token label: on screen the labels are thinned to what fits
(:func:`gui.widgets.labels.thin`), but a slide needs them all. When the map on screen thins, the export
is drawn from an offscreen copy of it (same data, title, font, colours and scale) laid out large
enough that every label fits, up to :data:`FULL_LABELS_UP_TO` tokens per axis; beyond that the
copy is sized for that many and the labels are thinned, which :attr:`MapExport.note` says.
The map on screen is never touched."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from gui.export.files import export_png
from gui.export.svg import export_svg
from gui.widgets.heatmap import Heatmap
from gui.widgets.labels import GAP, SIN45

FULL_LABELS_UP_TO = 64  # tokens per axis that the export always labels in full
_TRIES = 6  # layout passes: the axes' sizes change once their labels are laid out


@dataclass
class MapExport:
    """One written map file. ``rows_drawn``/``cols_drawn``: the token indices (0-based) whose
    labels the export drew on the query (left) and key (bottom) axis."""

    path: Path
    size: tuple[int, int]  # pixels (PNG) or SVG px
    rows_drawn: list[int]
    cols_drawn: list[int]
    n_rows: int
    n_cols: int

    @property
    def thinned(self) -> bool:
        return len(self.rows_drawn) < self.n_rows or len(self.cols_drawn) < self.n_cols

    @property
    def note(self) -> str:
        """ "" when every label was drawn, else e.g. "; labels thinned: 40 of 80 queries, 64 of 64 keys"."""
        if not self.thinned:
            return ""
        return (
            f"; labels thinned: {len(self.rows_drawn)} of {self.n_rows} queries, "
            f"{len(self.cols_drawn)} of {self.n_cols} keys (all are drawn up to {FULL_LABELS_UP_TO} per axis)"
        )


def _axes(hm: Heatmap):
    return hm.plot.getAxis("left"), hm.plot.getAxis("bottom")


def _pitch(hm: Heatmap) -> tuple[float, float]:
    """Pixels per row and per column at which every label fits (rows: one line of text; columns:
    side by side, or at 45° when that is narrower: a line height / sin 45° per column), with the
    labels' gap and a pixel spare."""
    fm = QtGui.QFontMetricsF(hm.plot.getAxis("left")._font())
    height = fm.height() + GAP + 1
    bottom = hm.plot.getAxis("bottom")
    max_w = fm.averageCharWidth() * bottom.max_chars
    widest = (
        max(
            (fm.horizontalAdvance(fm.elidedText(str(t), QtCore.Qt.TextElideMode.ElideRight, max_w)) for t in hm.col_tokens),
            default=0.0,
        )
        + 2
    )
    return height, min(widest + GAP, fm.height() / SIN45 + GAP) + 1


def _deficit(hm: Heatmap) -> tuple[int, int]:
    """Pixels the view lacks (width, height) for every label of up to FULL_LABELS_UP_TO tokens."""
    row_px, col_px = _pitch(hm)
    rows, cols = min(len(hm.row_tokens), FULL_LABELS_UP_TO), min(len(hm.col_tokens), FULL_LABELS_UP_TO)
    need_w, need_h = cols * col_px, rows * row_px
    return max(0, int(need_w - hm.view.width()) + 1), max(0, int(need_h - hm.view.height()) + 1)


def _copy(hm: Heatmap) -> Heatmap:
    """An offscreen Heatmap drawing what ``hm`` draws, at ``hm``'s size (shown, never on screen)."""
    twin = Heatmap(hm.cmap)
    twin.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    twin.set_font(hm.font)
    twin.set_scale(hm.scale)
    twin.show_values = hm.show_values
    if hm.mask_mode:
        twin.set_mask_matrix(*hm.mask_args)
    elif hm.drawn_args is not None:
        twin.set_matrix(*hm.drawn_args)
    twin.resize(hm.size())
    twin.show()
    return twin


def _settle(widget: QtWidgets.QWidget) -> None:
    """Lay out and paint once (the axes size themselves to their labels as they are drawn)."""
    QtWidgets.QApplication.processEvents()
    widget.grab()
    QtWidgets.QApplication.processEvents()


@contextmanager
def labelled_layout(hm: Heatmap):
    """Yield the widget to export for ``hm``: ``hm`` itself when its view already has room for
    every label (or shows no map), else an offscreen copy enlarged until it has (deleted
    afterwards). Wider or taller than ``hm`` only by what the labels need."""
    if hm.drawn_args is None or hm.placeholder.isVisible() or _deficit(hm) == (0, 0):
        yield hm
        return
    twin = _copy(hm)
    try:
        _settle(twin)
        for _ in range(_TRIES):
            dw, dh = _deficit(twin)
            if (dw, dh) == (0, 0):
                break
            twin.resize(twin.width() + dw, twin.height() + dh)
            _settle(twin)
        yield twin
    finally:
        twin.close()
        twin.deleteLater()


def export_map(path: str | Path, hm: Heatmap, fmt: str = "png", scale: int = 2) -> MapExport:
    """Write the enlarged map ``hm`` to ``path`` as PNG (``scale`` times the laid-out size) or
    SVG (``fmt="svg"``, text as outlines) with every token label on both axes up to
    :data:`FULL_LABELS_UP_TO` per axis (see :func:`labelled_layout`). Returns what was written
    and which labels it drew. Raises OSError when the file cannot be written, ValueError for
    another ``fmt``."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"unknown map export format {fmt!r}; choose png or svg")
    with labelled_layout(hm) as widget:
        out, size = export_png(path, widget, scale) if fmt == "png" else export_svg(path, widget)
        left, bottom = _axes(widget)
        rows = sorted(i for _, _, i in left.drawn)
        cols = sorted(i for _, _, i in bottom.drawn)
    return MapExport(Path(out), size, rows, cols, len(hm.row_tokens), len(hm.col_tokens))
