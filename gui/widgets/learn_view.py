"""One snapshot of a live toy-task run drawn with the main views' widgets: the layer × head grid
(:class:`gui.widgets.head_grid.HeadGrid`), the enlarged map (:class:`gui.widgets.heatmap.Heatmap`,
token labels on both axes, rows = queries, columns = keys, masks hatched), the training curves
(:class:`gui.widgets.curve.LearnCurves`) and a caption. The Learn tab shows one; the frame export
draws another offscreen at a fixed size."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6 import QtCore, QtGui, QtWidgets

from gui.state import learn_view as lv
from gui.widgets.colormap import Colormap
from gui.widgets.curve import LearnCurves
from gui.widgets.head_grid import HeadGrid
from gui.widgets.heatmap import Heatmap
from gui.widgets.pg_config import configure

if TYPE_CHECKING:
    from core.training.live_session import Snapshot


class LearnView(QtWidgets.QWidget):
    """Grid and curves on the left, the enlarged map on the right, the caption above.

    ``clicked((layer, head))``: a grid cell was clicked (0-based). :meth:`show_snapshot` draws one
    snapshot; ``shown`` is then ``(index, kind, key)`` of what is drawn and ``map`` its
    :class:`gui.state.learn_view.LearnMap`."""

    clicked = QtCore.Signal(object)

    def __init__(self, cmap: Colormap, font: QtGui.QFont | None = None, parent=None) -> None:
        configure()  # white background, row-major images: before the first plot is built
        super().__init__(parent)
        self.grid = HeadGrid(cmap)
        self.heatmap = Heatmap(cmap)
        self.curves = LearnCurves()
        self.caption = QtWidgets.QLabel("")
        self.caption.setWordWrap(True)
        self.caption.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        left = QtWidgets.QSplitter(QtCore.Qt.Orientation.Vertical)
        left.addWidget(self.grid)
        left.addWidget(self.curves)
        left.setSizes([300, 300])
        split = QtWidgets.QSplitter(QtCore.Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(self.heatmap)
        split.setSizes([400, 500])
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.caption)
        layout.addWidget(split, 1)
        self.splitters = (split, left)
        self.grid.clicked.connect(self.clicked)
        self.shown: tuple | None = None
        self.map: lv.LearnMap | None = None
        self._curves_of: tuple = ()  # (id of the first snapshot, count) the curves were drawn for
        self.set_font(font or QtGui.QFont())
        self.heatmap.set_empty("Press Train: the probe pair's maps appear here as the model learns.")

    def set_font(self, font: QtGui.QFont) -> None:
        self.font = QtGui.QFont(font)
        self.caption.setFont(self.font)
        self.grid.set_font(self.font)
        self.heatmap.set_font(self.font)
        self.curves.set_font(self.font)

    def set_colormap(self, cmap: Colormap) -> None:
        self.grid.set_colormap(cmap)
        self.heatmap.set_colormap(cmap)

    def clear(self, text: str) -> None:
        """No snapshot (a new run being built): empty map with ``text``, no curves."""
        self.shown, self.map, self._curves_of = None, None, ()
        self.curves.set_series([], {})
        self.heatmap.set_empty(text)
        self.grid.set_cells([], 1)
        self.caption.setText(text)

    def show_snapshot(
        self,
        snapshots: list[Snapshot],
        index: int,
        kind: str = "cross",
        chosen: tuple[int, int] | None = None,
        follow_best: bool = True,
        what: str = "",
        limits: tuple[float, float] | None = None,
    ) -> None:
        """Draw ``snapshots[index]``'s maps of ``kind`` (grid and enlarged head: see
        :func:`gui.state.learn_view.enlarged_key`), the curves of all ``snapshots`` (redrawn only
        when they changed; ``limits``: see :meth:`LearnCurves.set_series`) with the marker at this one,
        and its caption. Raises IndexError."""
        snap = snapshots[index]
        m = lv.learn_map(snap.evaluation.maps, kind)
        key = lv.enlarged_key(snap, kind, chosen, follow_best)
        self.grid.selected = key
        self.grid.set_cells(lv.grid_cells(m), m.weights.shape[1])
        self.heatmap.set_matrix(
            m.weights[key], m.mask, m.row_tokens, m.col_tokens, lv.map_title(snap, m, key), m.row_label, m.col_label
        )
        drawn = (id(snapshots[0]), len(snapshots), limits)
        if drawn != self._curves_of:
            c = lv.curves(snapshots)
            self.curves.set_series(c.updates, {n: getattr(c, n) for n in lv.SERIES}, limits)
            self._curves_of = drawn
        self.curves.set_marker(snap.updates)
        self.caption.setText(lv.caption(snap, what))
        self.shown, self.map = (index, kind, key), m


__all__ = ["LearnView"]
