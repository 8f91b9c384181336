"""Panels for the lecture experiments, each fed from the Qt-free view model:

- :class:`ForkPanel`: force a typed word at the current step; the original and the forked
  translation side by side with their total log-probabilities;
- :class:`ReferencePanel`: teacher forcing that teaches (reference token and its probability,
  the model's argmax, running loss; mean NLL, perplexity; the causal-mask-off switch);
- :class:`BeamPanel`: the beam at the current search step and the finished hypotheses
  (cumulative log P and length-normalised score); clicking one shows its maps;
- :class:`ExperimentBar`: "batch with …" second sentence, which batch sentence to show, and
  "show the full translation at once".
"""

from __future__ import annotations

import html

from PySide6 import QtCore, QtWidgets

from gui.state.view_model import ViewModel
from gui.widgets.tables import read_only_table, set_texts


class ForkPanel(QtWidgets.QWidget):
    """Signals: ``force_word(str)`` (type a word, press Enter or Force), ``unfork()``."""

    force_word = QtCore.Signal(str)
    unfork = QtCore.Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        v = QtWidgets.QVBoxLayout(self)
        v.setContentsMargins(2, 2, 2, 2)
        hint = QtWidgets.QLabel(
            "What if the model had said …? Click a candidate bar above, or type a word "
            "to force it at this step; decoding continues from there."
        )
        hint.setWordWrap(True)
        row = QtWidgets.QHBoxLayout()
        self.word = QtWidgets.QLineEdit()
        self.word.setPlaceholderText("English word(s) to force")
        self.force_button = QtWidgets.QPushButton("Force")
        self.unfork_button = QtWidgets.QPushButton("Undo fork")
        self.unfork_button.setEnabled(False)
        row.addWidget(self.word, 1)
        row.addWidget(self.force_button)
        row.addWidget(self.unfork_button)
        self.compare = QtWidgets.QLabel("no fork yet")
        self.compare.setWordWrap(True)
        self.compare.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.compare.setAlignment(QtCore.Qt.AlignmentFlag.AlignTop | QtCore.Qt.AlignmentFlag.AlignLeft)
        v.addWidget(hint)
        v.addLayout(row)
        v.addWidget(self.compare, 1)
        self.word.returnPressed.connect(self._emit)
        self.force_button.clicked.connect(self._emit)
        self.unfork_button.clicked.connect(self.unfork)

    def _emit(self) -> None:
        if self.word.text().strip():
            self.force_word.emit(self.word.text().strip())

    def update_from(self, vm: ViewModel) -> None:
        rows = vm.side_by_side()
        self.unfork_button.setEnabled(rows is not None)
        self.setEnabled(vm.live)
        if rows is None:
            self.compare.setText("no fork yet" if vm.live else "forking needs a live decoder (not in teacher forcing or a batch)")
            return
        cells = "".join(
            f"<tr><td><b>{html.escape(label)}</b></td><td>{html.escape(text)}</td>"
            f"<td align='right'>{'—' if lp is None else f'{lp:.3f}'}</td></tr>"
            for label, text, lp in rows
        )
        self.compare.setText(
            "<table cellspacing='4'><tr><th></th><th align='left'>translation</th>"
            f"<th>log P (nats)</th></tr>{cells}</table>"
            "<span style='color:#666'>◀ Back from the end returns to the fork point.</span>"
        )


class ReferencePanel(QtWidgets.QWidget):
    """Teacher forcing per step; signal ``causal_toggled(bool)`` (True = causal mask on)."""

    causal_toggled = QtCore.Signal(bool)
    HEADERS = ["step", "reference", "p(ref)", "argmax", "loss so far"]

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        v = QtWidgets.QVBoxLayout(self)
        v.setContentsMargins(2, 2, 2, 2)
        self.causal_off = QtWidgets.QCheckBox("Causal mask OFF")
        self.causal_off.toggled.connect(lambda off: self.causal_toggled.emit(not off))
        causal_hint = QtWidgets.QLabel("ticked: the decoder sees the future tokens too (why the mask exists)")
        causal_hint.setWordWrap(True)  # the dock is narrow: the words wrap rather than widen it
        self.loss = QtWidgets.QLabel("give a reference to see the training view")
        self.loss.setWordWrap(True)
        self.table = read_only_table(
            self.HEADERS,
            "p(ref): the model's probability of the reference token, also "
            "outside the top-k; argmax: the model's own choice (✓ = the reference); "
            "loss so far: mean NLL in nats/token of steps 1..k",
        )
        v.addWidget(self.causal_off)
        v.addWidget(causal_hint)
        v.addWidget(self.loss)
        v.addWidget(self.table, 1)

    def update_from(self, vm: ViewModel) -> None:
        rows = vm.reference_rows()
        self.loss.setText(vm.loss_text() or "give a reference to see the training view (teacher forcing)")
        self.table.setRowCount(len(rows))
        for i, r in enumerate(rows):
            set_texts(
                self.table,
                i,
                [str(r.step), r.token, f"{r.prob:.4f}", ("✓ " if r.hit else "✗ ") + r.argmax, f"{r.running_loss:.3f}"],
            )
        if rows:
            self.table.scrollToItem(self.table.item(len(rows) - 1, 0))


class BeamPanel(QtWidgets.QWidget):
    """The beam at the shown step. Signal ``path_clicked(object ids, bool finished)``."""

    path_clicked = QtCore.Signal(object, bool)
    HEADERS = ["", "hypothesis", "log P", "log P / lp"]

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        v = QtWidgets.QVBoxLayout(self)
        v.setContentsMargins(2, 2, 2, 2)
        self.caption = QtWidgets.QLabel("beam search only")
        self.caption.setWordWrap(True)
        self.table = read_only_table(
            self.HEADERS,
            "log P: cumulative log-probability (nats); log P / lp: length-normalised score, lp = ((5 + |Y|) / 6)^α (GNMT)",
        )
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(1, QtWidgets.QHeaderView.ResizeMode.Stretch)
        self.table.cellClicked.connect(self._clicked)
        v.addWidget(self.caption)
        v.addWidget(self.table, 1)
        self.rows: list = []

    def _clicked(self, i: int, _col: int) -> None:
        if 0 <= i < len(self.rows):
            _, row, _ = self.rows[i]
            if row.ids or row.finished:
                self.path_clicked.emit(list(row.ids), row.finished)

    def update_from(self, vm: ViewModel) -> None:
        self.rows = vm.beam_rows()
        self.caption.setText(beam_caption(vm))
        self.table.setRowCount(len(self.rows))
        for i, (kind, row, current) in enumerate(self.rows):
            mark = ("▶ " if current else "") + ("EOS" if kind == "finished" else "live")
            set_texts(self.table, i, [mark, row.text or "(empty)", f"{row.logprob:.3f}", f"{row.score:.3f}"])
            self.table.item(i, 1).setToolTip(" ".join(row.tokens))


def beam_caption(vm: ViewModel) -> str:
    """The Beam panel's caption. Steps are counted as the slider counts them (step k of n, "…" while
    the output is not finished: :meth:`gui.window.live.LiveController.sync`): step k shows the beam
    after search step k, whose hypotheses have k tokens, like the output at step k. The search
    itself usually runs on after the hypothesis shown has ended (it stops only once no live
    hypothesis can still beat the finished ones), so its own length is named apart."""
    r = vm.result
    searched = len(r.beam_trace) if r is not None else 0
    if not searched:
        return "beam search only: choose Beam k and translate"
    k, finished = vm.step, vm.state.finished
    total = str(vm.n_steps) if finished else "…"
    if k == 0:
        return (
            f"step 0 of {total}: no token chosen yet, the search starts from [BOS] alone. Step ▶ shows the "
            "beam after each search step."
        )
    if k > searched:
        head = (
            f"step {k} of {total}: the search ended after step {searched} (this hypothesis goes on); the beam "
            f"after search step {searched}"
        )
    else:
        head = f"the beam after step {k} of {total} (live)"
    ran = (
        f" The search itself ran {searched} steps: it goes on until no live hypothesis can still beat the finished ones."
        if finished and searched != vm.n_steps
        else ""
    )
    return f"{head}, then the hypotheses finished so far; ▶ = the one being stepped through. Click one to see its maps.{ran}"


class ExperimentBar(QtWidgets.QWidget):
    """Second sentence for a padded batch, which one to show, and "show full translation".
    Signals: ``batch_index_changed(int)``, ``show_full_changed(bool)``, ``translate_requested()``
    (Enter in the "Batch with" box, as Enter in the Korean box)."""

    batch_index_changed = QtCore.Signal(int)
    show_full_changed = QtCore.Signal(bool)
    translate_requested = QtCore.Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        row = QtWidgets.QHBoxLayout(self)
        row.setContentsMargins(4, 0, 4, 0)
        self.batch_with = QtWidgets.QLineEdit()
        self.batch_with.setPlaceholderText("optional second Korean sentence → both run as one padded batch")
        self.batch_with.returnPressed.connect(self.translate_requested)
        self.shown = QtWidgets.QComboBox()
        self.shown.addItems(["show sentence 1", "show sentence 2"])
        self.shown.setEnabled(False)
        self.shown.currentIndexChanged.connect(self.batch_index_changed)
        self.show_full = QtWidgets.QCheckBox("Show full translation at once")
        self.show_full.toggled.connect(self.show_full_changed)
        row.addWidget(QtWidgets.QLabel("Batch with:"))
        row.addWidget(self.batch_with, 1)
        row.addWidget(self.shown)
        row.addWidget(self.show_full)

    def update_from(self, vm: ViewModel) -> None:
        has_batch = bool(vm.state and vm.state.batch)
        self.shown.setEnabled(has_batch)
