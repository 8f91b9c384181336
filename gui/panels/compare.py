"""The "Compare" tab (Side by side): two runs with the same head selected, either two
inputs on the app's model (나는 … vs 너는 …) or one input on two checkpoints (B chosen with a
file dialog or typed; loaded in the worker thread). Both maps are drawn on one grid; where the
shapes and tokens match, a difference map B − A (diverging colours, 0 = white, hover values);
where they do not, a line says why no difference is drawn. An opt-in check box also subtracts
by position where only tokens differ (same shape), labelling those positions A|B.
"""

from __future__ import annotations

import html

import numpy as np
from PySide6 import QtCore, QtWidgets

from core.errors import InputError
from gui.panels.pair_views import DetachablePanel, MapRow, error_style, narrow_combo
from gui.state import view_kinds
from gui.state.compare_data import compare_maps, head_map

MODES = {"inputs": "two inputs, this model", "checkpoints": "two checkpoints, one input"}


class ComparePanel(DetachablePanel):
    """Signals: ``compare_requested()``, ``browse_requested()``. ``outcome`` is the last good
    :class:`~gui.workers.analysis_worker.CompareOutcome`; ``comparison`` the last drawn
    :class:`~gui.state.compare_data.Comparison` (None when a map is missing)."""

    compare_requested = QtCore.Signal()

    def __init__(self, parent=None) -> None:
        super().__init__("Compare", parent)
        self.outcome = None
        self.comparison = None
        self.selection_shown: tuple[str, int, int] = (view_kinds.DEFAULT, 0, 0)
        v = self.scrolled_body()
        top = QtWidgets.QHBoxLayout()
        self.mode = QtWidgets.QComboBox()
        for k, name in MODES.items():
            self.mode.addItem(name, k)
        self.compare_button = QtWidgets.QPushButton("Compare")
        self.clear_button = QtWidgets.QPushButton("Clear")
        self.clear_button.setToolTip("remove the comparison shown (File → Export then holds none)")
        self.by_position = QtWidgets.QCheckBox("B − A where only tokens differ")
        self.by_position.setToolTip(
            "same shape, different tokens (나는 … vs 너는 …): subtract by position; the differing labels read A|B"
        )
        self.by_position.toggled.connect(lambda _on: self.refresh(self.selection_shown))
        narrow_combo(self.mode)
        top.addWidget(self.mode, 1)
        top.addWidget(self.detach_button)
        buttons = QtWidgets.QHBoxLayout()  # rows of their own: the tab fits a narrow dock
        buttons.addWidget(self.compare_button)
        buttons.addWidget(self.clear_button)
        buttons.addStretch(1)
        form = QtWidgets.QFormLayout()
        self.text_a = QtWidgets.QLineEdit()
        self.text_a.setPlaceholderText("Korean sentence A (empty: the sentence above)")
        self.text_b = QtWidgets.QLineEdit()
        self.text_b.setPlaceholderText("Korean sentence B, e.g. one word changed")
        path_row = QtWidgets.QHBoxLayout()
        self.path_b = QtWidgets.QLineEdit()
        self.path_b.setPlaceholderText("checkpoint B directory")
        self.browse_button = QtWidgets.QPushButton("Browse…")
        path_row.addWidget(self.path_b, 1)
        path_row.addWidget(self.browse_button)
        self.path_box = QtWidgets.QWidget()
        self.path_box.setLayout(path_row)
        path_row.setContentsMargins(0, 0, 0, 0)
        form.addRow("Input A:", self.text_a)
        self.text_b_label = QtWidgets.QLabel("Input B:")
        form.addRow(self.text_b_label, self.text_b)
        self.path_label = QtWidgets.QLabel("Checkpoint B:")
        form.addRow(self.path_label, self.path_box)
        self.status = QtWidgets.QLabel("choose what to compare and press Compare; the head is the one selected in the grid")
        self.status.setWordWrap(True)
        self.summary = QtWidgets.QLabel("")
        self.summary.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.summary.setWordWrap(True)
        self.maps = MapRow(("A", "B"), with_diff=True)
        v.addLayout(top)
        v.addWidget(self.by_position)
        v.addLayout(buttons)
        v.addLayout(form)
        v.addWidget(self.status)
        v.addWidget(self.summary)
        v.addWidget(self.maps, 1)
        self.mode.currentIndexChanged.connect(self._mode_changed)
        self.compare_button.clicked.connect(self.compare_requested)
        self.text_b.returnPressed.connect(self.compare_requested)
        self.browse_button.clicked.connect(self.browse)
        self.clear_button.clicked.connect(lambda: self.clear_result("choose what to compare and press Compare"))
        self._mode_changed()

    @property
    def current_mode(self) -> str:
        return self.mode.currentData()

    def set_mode(self, mode: str) -> None:
        self.mode.setCurrentIndex(list(MODES).index(mode))

    def _mode_changed(self) -> None:
        two_inputs = self.current_mode == "inputs"
        for w in (self.text_b, self.text_b_label):
            w.setVisible(two_inputs)
        for w in (self.path_box, self.path_label):
            w.setVisible(not two_inputs)

    def browse(self) -> None:
        path = QtWidgets.QFileDialog.getExistingDirectory(self, "Checkpoint B (a checkpoint directory)", self.path_b.text())
        if path:
            self.path_b.setText(path)

    def show_error(self, reason: str) -> None:
        kept = " — the last result stays below" if self.outcome is not None else ""
        error_style(self.status, f"{reason}{kept}", True)

    def clear_result(self, why: str) -> None:
        """Forget the last outcome and empty the maps and summary; ``why`` goes in the status line."""
        self.outcome = self.comparison = None
        self.summary.setText("")
        self.maps.clear()
        error_style(self.status, why, False)

    def npz_extra(self) -> dict[str, np.ndarray]:
        """The comparison on screen for File → Export (.npz), empty without one: ``compare_mode``
        ("inputs"/"checkpoints"), ``compare_label_a``/``_b``, ``compare_source_a``/``_b``,
        ``compare_tokens_a``/``_b`` (each run's output), the maps drawn ``compare_map_a`` /
        ``compare_map_b`` ``[rows, cols]`` with masks (True = masked), axis tokens and titles,
        ``compare_diff`` = B − A with ``compare_diff_mask`` and labels only where it is drawn,
        ``compare_by_position`` and ``compare_reason`` (the line under the maps)."""
        o = self.outcome
        if o is None or self.maps.shown is None:
            return {}
        out = {
            "compare_mode": np.array(o.mode),
            "compare_label_a": np.array(o.label_a),
            "compare_label_b": np.array(o.label_b),
            "compare_source_a": np.array(o.a.source.text),
            "compare_source_b": np.array(o.b.source.text),
            "compare_tokens_a": np.array([s.token for s in o.a.steps], dtype=str),
            "compare_tokens_b": np.array([s.token for s in o.b.steps], dtype=str),
            "compare_by_position": np.bool_(self.by_position.isChecked()),
            "compare_reason": np.array(self.maps.reason.text()),
        }
        out.update(self.maps.npz_arrays("compare_", ("map_a", "map_b")))
        return out

    def show_outcome(self, outcome, ms: float, selection: tuple[str, int, int]) -> None:
        self.outcome = outcome
        error_style(self.status, f"compared {MODES[outcome.mode]} · {ms:.0f} ms", False)
        self.refresh(selection)

    def refresh(self, selection: tuple[str, int, int]) -> None:
        """Draw the last outcome for the head ``selection`` (view kind, 0-based layer and head)."""
        o = self.outcome
        if o is None:
            return
        self.selection_shown = selection
        kind, layer, head = selection
        rows = "".join(
            f"<tr><td><b>{html.escape(label)}</b></td><td>{html.escape(r.translation)}</td>"
            f"<td align='right'>{'—' if r.logprob is None else f'{r.logprob:.3f}'}</td></tr>"
            for label, r in ((o.label_a, o.a), (o.label_b, o.b))
        )
        self.summary.setText(
            f"<table cellspacing='4'><tr><th></th><th align='left'>translation</th><th>log P (nats)</th></tr>{rows}</table>"
        )
        self.maps.set_font(self.font())
        maps, problems = [], []
        for label, r in (("A", o.a), ("B", o.b)):
            try:
                maps.append(head_map(r, kind, layer, head, label))
            except InputError as exc:
                maps.append(None)
                problems.append(str(exc))
        a, b = maps
        by_position = self.by_position.isChecked()
        self.comparison = compare_maps(a, b, by_position) if a is not None and b is not None else None
        self.maps.show_pair(a, b, self.comparison)
        if problems:
            self.maps.no_diff("no difference map: " + "; ".join(problems))
