"""The Adapt tab's result: each shown pair's translation before and after adapting, and the
cross-attention of one of them, before and after side by side (rows = English queries,
columns = Korean keys) with after − before where both outputs have the same tokens."""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

from PySide6 import QtCore, QtWidgets

from core.errors import InputError
from gui.panels.pair_views import MapRow, narrow_combo
from gui.state.compare_data import compare_maps, head_map
from gui.state.view_kinds import view_at
from gui.workers.adapt_worker import AdaptOutcome


class AdaptComparison(QtWidgets.QWidget):
    """Wraps an :class:`AdaptOutcome` (``outcome``; None before the first run): ``summary`` (the
    shown pairs' texts), ``sentence`` / ``layer`` / ``head`` (which cross-attention map, numbered
    from 1) and ``maps`` (before, after, after − before). ``on_error(text)`` reports a map that
    cannot be drawn; the maps on screen stay as they were."""

    def __init__(self, on_error: Callable[[str], None], parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.outcome: AdaptOutcome | None = None
        self.on_error = on_error
        self.summary = QtWidgets.QLabel("")
        self.summary.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.summary.setWordWrap(True)
        self.sentence = QtWidgets.QComboBox()
        narrow_combo(self.sentence)
        self.layer, self.head = QtWidgets.QSpinBox(), QtWidgets.QSpinBox()
        pick = QtWidgets.QGridLayout()
        heading = QtWidgets.QLabel("Cross-attention, before and after, of the sentence:")
        heading.setWordWrap(True)  # the experiments dock is narrow
        pick.addWidget(heading, 0, 0, 1, 5)
        pick.addWidget(self.sentence, 1, 0, 1, 5)
        for k, (label, box) in enumerate((("layer", self.layer), ("head", self.head))):
            box.setRange(1, 1)
            pick.addWidget(QtWidgets.QLabel(label), 2, 2 * k)
            pick.addWidget(box, 2, 1 + 2 * k)
        pick.setColumnStretch(4, 1)
        self.maps = MapRow(("before", "after"), with_diff=True)
        v = QtWidgets.QVBoxLayout(self)
        v.setContentsMargins(0, 0, 0, 0)
        v.addWidget(self.summary)
        v.addLayout(pick)
        v.addWidget(self.maps, 1)
        self.sentence.currentIndexChanged.connect(self.redraw)
        self.layer.valueChanged.connect(self.redraw)
        self.head.valueChanged.connect(self.redraw)

    def show_outcome(self, outcome: AdaptOutcome) -> None:
        """Show a finished run: its pairs' texts, the first pair's map in the last layer (its
        cross-attention aligns best), head 1."""
        self.outcome = outcome
        self.summary.setText(_summary_html(outcome))
        self.sentence.blockSignals(True)
        self.sentence.clear()
        for ko, _en in outcome.spec.pairs[: len(outcome.before)]:
            self.sentence.addItem(ko)
        self.sentence.blockSignals(False)
        if outcome.before:
            n_layers, n_heads = _cross_shape(outcome.before[0])
            for box, n in ((self.layer, n_layers), (self.head, n_heads)):
                box.blockSignals(True)
                box.setRange(1, n)
                box.blockSignals(False)
            self.layer.setValue(n_layers)
        self.redraw()

    def redraw(self, *_args) -> None:
        """The cross-attention of the chosen sentence, before and after (and after − before)."""
        o, i = self.outcome, self.sentence.currentIndex()
        if o is None or not 0 <= i < len(o.before):
            return
        layer, head = self.layer.value() - 1, self.head.value() - 1
        try:
            a = head_map(o.before[i], "cross", layer, head, f"before ({Path(o.spec.base).name})")
            b = head_map(o.after[i], "cross", layer, head, f"after ({o.spec.name})")
        except InputError as exc:
            self.on_error(str(exc))
            return
        self.maps.set_font(self.font())
        self.maps.show_pair(a, b, compare_maps(a, b))


def _cross_shape(result) -> tuple[int, int]:
    """(layers, heads) of ``result``'s cross-attention."""
    w = view_at(result, len(result.maps.tgt_tokens), "cross").weights
    return int(w.shape[0]), int(w.shape[1])


def _summary_html(o: AdaptOutcome) -> str:
    """Each shown pair: its Korean, the reference, the translation before and after (one line each,
    so the text wraps in a narrow dock)."""
    e = html.escape
    parts = [
        f"<p><b>{e(ko)}</b><br>reference: {e(en)}<br>before: {e(b.translation)}<br>after: <b>{e(a.translation)}</b></p>"
        for (ko, en), b, a in zip(o.spec.pairs, o.before, o.after)
    ]
    more = len(o.spec.pairs) - len(o.before)
    if more > 0:
        parts.append(f"<p>… and {more} more pair(s) (all in the model's card)</p>")
    return "".join(parts)
