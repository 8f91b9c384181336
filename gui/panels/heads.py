"""Finding the interesting heads (summaries): a sortable head table (a tab beside the experiment
panels) and the alignment lines (a tab beside the enlarged heatmap). The derived cells in the grid
(mean over heads per layer, encoder rollout) come from :mod:`gui.state.view_spec`. Numbers:
gui/state/derived.py, which calls core.analysis.head_stats on the model's tensors.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6 import QtCore, QtWidgets

from core.analysis.head_stats import HeadStats
from core.transformer.kinds import AttentionKind
from gui.panels.context import Panel, PanelContext
from gui.state import derived as dv
from gui.state import view_kinds
from gui.state.view_kinds import view_title
from gui.state.view_spec import ViewFrame
from gui.widgets.alignment import AlignmentPanel

SORT_ROLE = QtCore.Qt.ItemDataRole.UserRole + 1
HEAD_ROLE = QtCore.Qt.ItemDataRole.UserRole + 2
TABLE_HINT = (
    "Click a column header to sort, a row to open that head. Entropy: mean over query rows, nats "
    "(max = ln #visible keys). prev / same / next / sink: mean share of attention on key i−1 / i / "
    "i+1 / [EOS] or punctuation; mono: share of rows whose argmax key never moves back."
)


class _Item(QtWidgets.QTableWidgetItem):
    """A cell that shows ``text`` and sorts by ``key`` (numbers numerically; '–' last)."""

    def __init__(self, text: str, key) -> None:
        super().__init__(text)
        self.setData(SORT_ROLE, key)
        self.setFlags(self.flags() & ~QtCore.Qt.ItemFlag.ItemIsEditable)

    def __lt__(self, other) -> bool:
        a, b = self.data(SORT_ROLE), other.data(SORT_ROLE)
        if isinstance(a, str) or isinstance(b, str):
            return str(a) < str(b)
        return a < b


def _num(x: float | None) -> tuple[str, float]:
    return ("–", math.inf) if x is None else (f"{x:.3f}", float(x))


class HeadTable(QtWidgets.QTableWidget):
    """Every head of one view kind (``setSortingEnabled``). ``head_chosen(layer, head)``: 0-based."""

    head_chosen = QtCore.Signal(int, int)
    #: (header, HeadStats field); "label" shows gui.state.derived.LABEL_TEXT
    COLUMNS = (
        ("L", "layer"),
        ("H", "head"),
        ("label", "label"),
        ("entropy (nats)", "entropy"),
        ("prev", "prev"),
        ("same", "same"),
        ("next", "next"),
        ("sink", "sink"),
        ("mono", "monotone"),
    )
    HEADERS = [h for h, _ in COLUMNS]

    def __init__(self, parent=None) -> None:
        super().__init__(0, len(self.HEADERS), parent)
        self.setHorizontalHeaderLabels(self.HEADERS)
        self.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.verticalHeader().setVisible(False)
        self.setSortingEnabled(True)
        self.sortByColumn(self.HEADERS.index("entropy (nats)"), QtCore.Qt.SortOrder.AscendingOrder)
        self.cellClicked.connect(self._clicked)
        self.currentCellChanged.connect(self._moved)  # ↑ ↓ PgUp PgDn open the head too
        self.rows: list[HeadStats] = []

    def set_rows(self, rows: list[HeadStats], selected: tuple[int, int] | None) -> None:
        """Fill with ``rows`` (kept in the current sort order) and mark ``selected`` (0-based)."""
        self.rows = list(rows)
        self.blockSignals(True)  # filling moves the current cell: that is not a choice
        self.setSortingEnabled(False)
        self.setRowCount(len(rows))
        for i, h in enumerate(rows):
            items = []
            for _, field in self.COLUMNS:
                value = getattr(h, field)
                if field in ("layer", "head"):
                    items.append(_Item(str(value), int(value)))
                elif field == "label":
                    items.append(_Item(dv.label_text(h), dv.label_text(h)))
                elif field == "next" and not h.next_possible and h.kind == "dec":
                    items.append(_Item(dv.NEXT_IMPOSSIBLE, 0.0))  # exactly 0: the query may not see it
                    items[-1].setToolTip("the causal mask hides the next token (weight exactly 0)")
                else:
                    items.append(_Item(*_num(value)))
            items[0].setData(HEAD_ROLE, (h.layer - 1, h.head - 1))
            for j, item in enumerate(items):
                self.setItem(i, j, item)
        self.setSortingEnabled(True)  # re-sorts by the chosen column
        positional = bool(rows) and rows[0].prev is not None  # cross-attention has no prev/same/next
        for name in ("prev", "same", "next"):
            self.setColumnHidden(self.HEADERS.index(name), not positional)
        self.resizeColumnsToContents()
        self.blockSignals(False)
        self.mark(selected)

    def head_at(self, row: int) -> tuple[int, int]:
        """(layer, head), 0-based, of table row ``row`` as currently sorted."""
        return tuple(self.item(row, 0).data(HEAD_ROLE))

    def column(self, header: str) -> list:
        """The sort keys of one column, top to bottom (as shown)."""
        j = self.HEADERS.index(header)
        return [self.item(i, j).data(SORT_ROLE) for i in range(self.rowCount())]

    def mark(self, selected: tuple[int, int] | None) -> None:
        self.blockSignals(True)
        self.clearSelection()
        for i in range(self.rowCount()):
            if selected is not None and self.head_at(i) == tuple(selected):
                self.selectRow(i)
        self.blockSignals(False)

    def _clicked(self, row: int, _col: int) -> None:
        self.head_chosen.emit(*self.head_at(row))

    def _moved(self, row: int, _col: int, before: int, _before_col: int) -> None:
        if row >= 0 and row != before:
            self.head_chosen.emit(*self.head_at(row))


class HeadTablePanel(QtWidgets.QWidget):
    """The table under a caption naming the view kind (and, in the decoder, the causal mask)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        self.caption = QtWidgets.QLabel("Translate a sentence to see every head's summary.")
        self.caption.setWordWrap(True)
        self.hint = QtWidgets.QLabel(TABLE_HINT)
        self.hint.setWordWrap(True)
        self.table = HeadTable()
        lay.addWidget(self.caption)
        lay.addWidget(self.table, 1)
        lay.addWidget(self.hint)


class HeadTools(QtCore.QObject, Panel):
    """The "Heads" tab (every head of the view in a sortable table) and the "Alignment lines" tab
    beside the enlarged map. Both follow the view model and show what
    the view model's frame (:class:`gui.state.view_spec.ViewFrame`) enlarges; they fill only while their tab is shown."""

    name = "heads"

    def __init__(self, ctx: PanelContext) -> None:
        super().__init__()
        self.ctx, self.vm = ctx, ctx.vm
        self.table_panel = HeadTablePanel()
        self.table = self.table_panel.table
        self.align = AlignmentPanel()
        self.lines = self.align.lines
        self.map_tabs = ctx.map_tabs
        self.map_tabs.addTab(self.align, "Alignment lines")
        self.table.head_chosen.connect(ctx.select)
        self.align.mean_toggled.connect(lambda _: self.refresh())
        for tabs in (ctx.tabs, self.map_tabs):
            tabs.currentChanged.connect(lambda _: self.refresh())
        self._state: tuple | None = None  # (view, layer, head, derived map or None) on screen
        self._seen: ViewFrame | None = None  # the frame _state was made from
        self._masks_shown = False  # the Masks view's "no heads" is on screen
        self._done: dict[str, object] = {}  # what the table / lines last showed
        ctx.vm.subscribe(self._follow)

    def tabs(self) -> list[tuple[QtWidgets.QWidget, str]]:
        return [(self.table_panel, "Heads")]

    def _follow(self) -> None:
        """The view model changed: take the enlarged map's view, head and derived cell."""
        frame = self.vm.frame()  # what the enlarged map shows: gui/state/view_spec.py
        if frame is None:
            return
        if frame.view is None:  # the Masks view
            if not self._masks_shown:
                self._seen, self._masks_shown = None, True
                self.clear()
            return
        self._masks_shown = False
        if frame.same_picture(self._seen):
            return
        self._seen = frame
        layer, head = frame.selected
        self._state = (frame.view, layer, head, frame.enlarged.derived)
        self._done = {}
        self.refresh()

    def clear(self) -> None:
        """The Masks view: no heads to summarize."""
        self._state, self._done = None, {}
        self.table.set_rows([], None)
        self.table_panel.caption.setText("The Masks view has no heads: choose an attention view.")
        self.lines.clear("The Masks view has no attention: choose an attention view.")

    def refresh(self) -> None:
        """Update the table and the lines if their tab is shown and they are out of date."""
        if self._state is None:
            return
        if self.ctx.tabs.currentWidget() is self.table_panel and "table" not in self._done:
            self._fill_table()
        if self.map_tabs.currentWidget() is self.align and self._done.get("lines") != self.align.mean.isChecked():
            self._fill_lines()

    def _fill_table(self) -> None:
        v, layer, head, chosen = self._state
        rows = dv.head_rows(self._seen.step, v.kind)
        self.table.set_rows(rows, None if chosen is not None else (layer, head))
        note = (
            " The next token is impossible here: the causal mask hides it."
            if view_kinds.get(v.kind).attention is AttentionKind.DEC and rows and not rows[0].next_possible
            else ""
        )
        most = (
            f" Most entropy possible: {rows[0].max_entropy:.3f} nats (ln #visible keys)."
            if rows
            else " No query yet: press Step ▶ (→)."
        )
        self.table_panel.caption.setText(
            f"<b>{view_title(self.vm.result, v.kind)}</b> at step {self.vm.step}: {len(rows)} heads.{most}{note}"
        )
        self._done["table"] = True

    def alignment_map(self) -> dv.DerivedMap | None:
        """What the alignment lines show: the enlarged derived cell, else the selected head or
        (switch on) its layer's mean."""
        if self._state is None:
            return None
        v, layer, head, chosen = self._state
        if chosen is None and self.align.mean.isChecked():
            chosen = next(d for d in self._seen.derived if d.key == ("mean", layer))
        if chosen is not None:
            return chosen
        return dv.DerivedMap(
            (layer, head),
            f"layer {layer + 1}, head {head + 1}",
            v.weights[layer, head],
            v.mask,
            v.row_tokens,
            v.col_tokens,
            v.row_label,
            v.col_label,
        )

    def _fill_lines(self) -> None:
        v = self._state[0]
        m = self.alignment_map()
        what = m.title if dv.is_derived(m.key) else f"layer {m.key[0] + 1}, head {m.key[1] + 1}"
        r = self.vm.result
        self.lines.set_data(
            m.matrix,
            m.mask,
            m.row_tokens,
            m.col_tokens,
            m.row_label,
            m.col_label,
            f"{view_title(r, v.kind)} — {what}",
            dv.query_valid(self._seen.step, v.kind),
        )
        self._done["lines"] = self.align.mean.isChecked()

    # ---------- export ----------
    def npz_extra(self) -> dict[str, np.ndarray]:
        """The alignment weights on screen (``derived_align_weights [rows, cols]``, its mask, True =
        masked, and axes), which map they are (``derived_align_what``) and the enlarged derived
        cell (``derived_enlarged``, "" for a head); the other derived views come from
        :func:`gui.state.derived.derived_arrays` in :func:`gui.export.files.export_npz`."""
        m = self.alignment_map()
        if m is None:
            return {}
        v = self._state[0]
        key = m.key
        what = (
            (f"{key[0]} layer {key[1] + 1}" if key[0] == "mean" else "rollout")
            if dv.is_derived(key)
            else f"head layer {key[0] + 1} head {key[1] + 1}"
        )
        chosen = self._state[3]
        return {
            "derived_align_weights": np.asarray(m.matrix, dtype=np.float32),
            "derived_align_mask": np.asarray(m.mask, dtype=bool),
            "derived_align_rows": np.array(m.row_tokens, dtype=str),
            "derived_align_cols": np.array(m.col_tokens, dtype=str),
            "derived_align_query_valid": dv.query_valid(self._seen.step, v.kind),
            "derived_align_kind": np.array(v.kind),
            "derived_align_what": np.array(what),
            "derived_align_focus": np.int64(-1 if self.lines.focus is None else self.lines.focus + 1),
            "derived_enlarged": np.array("" if chosen is None else chosen.title),
        }
