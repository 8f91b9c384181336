"""The "Ablate heads" tab (Interventions): tick heads (layer:head, 1-based) of one
attention kind, press Ablate; the sentence is decoded again with those heads' outputs zeroed
before W^O, and the panel shows the unablated and ablated runs side by side: translations and
log P, the top-k at the current step, the selected head's map in both, and the change in log P
of each unablated output token. The work runs in the model's worker thread (gui/workers/analysis_worker.py).
"""

from __future__ import annotations

import html

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from core.analysis.ablation import parse_heads
from core.errors import InputError
from gui.panels.pair_views import DetachablePanel, MapRow, error_style, narrow_combo
from gui.state import view_kinds
from gui.state.compare_data import compare_maps, head_map, token_rows, top_k_at
from gui.widgets.tables import read_only_table
from gui.widgets.topk_panel import TopKPanel

KIND_NAMES = {"enc": "Encoder self-attention", "dec": "Decoder self-attention", "cross": "Cross-attention"}
NO_MODEL = "no model loaded yet: open one (File → Open), then tick heads and press Ablate"
READY = "tick heads and press Ablate: the sentence in the input above is decoded again without them"


def gui_wording(reason: str) -> str:
    """core's messages about ``--ablate`` (the CLI option) in this tab's words: "heads …"."""
    if reason.startswith("--ablate needs at least one"):
        return "tick at least one head (or type layer:head pairs, e.g. 2:3,3:1)"
    if reason.startswith("--ablate "):
        return "heads " + reason.removeprefix("--ablate ")
    return reason


class AblationPanel(DetachablePanel):
    """Signal ``ablate_requested()`` (the Ablate button or Enter in the heads field).

    ``heads`` (QLineEdit) holds the spec "2:3,3:1"; the checkbox grid ``boxes[(layer, head)]``
    (1-based) mirrors it. ``report`` is the last good :class:`~core.analysis.compare.AblationReport`.
    """

    ablate_requested = QtCore.Signal()
    HEADERS = ["step", "unablated token", "log P before", "log P ablated", "Δ log P"]

    def __init__(self, parent=None) -> None:
        super().__init__("Ablate heads", parent)
        self.report = None
        self.layers = {"enc": 0, "dec": 0, "cross": 0}
        self.n_heads = 0
        self.boxes: dict[tuple[int, int], QtWidgets.QCheckBox] = {}
        v = self.scrolled_body()
        hint = QtWidgets.QLabel(
            "Tick heads (layer:head, from 1) and press Ablate: the sentence is decoded "
            "again with their outputs zeroed before W^O."
        )
        hint.setWordWrap(True)
        row = QtWidgets.QHBoxLayout()
        self.kind = QtWidgets.QComboBox()
        for k, name in KIND_NAMES.items():
            self.kind.addItem(name, k)
        self.heads = QtWidgets.QLineEdit()
        self.heads.setPlaceholderText("layer:head, e.g. 2:3,3:1")
        self.ablate_button = QtWidgets.QPushButton("Ablate")
        self.clear_button = QtWidgets.QPushButton("Clear")
        narrow_combo(self.kind)
        row.addWidget(self.kind, 1)
        row.addWidget(self.detach_button)
        buttons = QtWidgets.QHBoxLayout()  # a row of its own: the tab fits a narrow dock
        buttons.addWidget(self.ablate_button)
        buttons.addWidget(self.clear_button)
        buttons.addStretch(1)
        heads_row = QtWidgets.QHBoxLayout()
        heads_row.addWidget(QtWidgets.QLabel("Heads:"))
        heads_row.addWidget(self.heads, 1)
        self.grid_box = QtWidgets.QWidget()
        self.grid = QtWidgets.QGridLayout(self.grid_box)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.status = QtWidgets.QLabel(NO_MODEL)
        self.status.setWordWrap(True)
        self.summary = QtWidgets.QLabel("")
        self.summary.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.summary.setWordWrap(True)
        self.topk_caption = QtWidgets.QLabel("")
        self.topk_caption.setWordWrap(True)
        topk_row = QtWidgets.QHBoxLayout()
        self.topk_a, self.topk_b = TopKPanel(), TopKPanel()
        for t in (self.topk_a, self.topk_b):
            t.setMinimumSize(140, 150)
            t.setMaximumHeight(210)
            topk_row.addWidget(t, 1)
        self.map_caption = QtWidgets.QLabel("")
        self.map_caption.setWordWrap(True)
        self.maps = MapRow(("unablated", "ablated"), with_diff=False)
        self.table = read_only_table(
            self.HEADERS,
            "each token of the unablated output, forced in order: its log P "
            "(nats) without and with the ablation; Δ = ablated − before. The last row is "
            "the sum.",
        )
        self.table.setMinimumHeight(160)
        v.addWidget(hint)
        v.addLayout(row)
        v.addLayout(buttons)
        v.addLayout(heads_row)
        v.addWidget(self.grid_box, 0, QtCore.Qt.AlignmentFlag.AlignLeft)  # compact: one box per head
        v.addWidget(self.status)
        v.addWidget(self.summary)
        v.addWidget(self.topk_caption)
        v.addLayout(topk_row)
        v.addWidget(self.map_caption)
        v.addWidget(self.maps, 3)
        table_caption = QtWidgets.QLabel("Change in log P of the unablated output's tokens (nats):")
        table_caption.setWordWrap(True)
        v.addWidget(table_caption)
        v.addWidget(self.table, 2)
        self.kind.currentIndexChanged.connect(self._rebuild_grid)
        self.heads.textEdited.connect(self.sync_boxes)
        self.heads.returnPressed.connect(self.ablate_requested)
        self.ablate_button.clicked.connect(self.ablate_requested)
        self.clear_button.clicked.connect(self.clear)

    # ---------- head selection ----------
    @property
    def core_kind(self) -> str:
        return self.kind.currentData()

    def set_model(self, config) -> None:
        """Size the checkbox grid for a model: encoder / decoder layers × heads."""
        self.layers = {"enc": config.n_encoder_layers, "dec": config.n_decoder_layers, "cross": config.n_decoder_layers}
        self.n_heads = config.n_heads
        self._rebuild_grid()
        if self.report is None:
            error_style(self.status, READY, False)

    def _rebuild_grid(self) -> None:
        while self.grid.count():
            item = self.grid.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.boxes.clear()
        n_layers = self.layers[self.core_kind]
        for h in range(self.n_heads):
            self.grid.addWidget(QtWidgets.QLabel(f"H{h + 1}"), 0, h + 1, QtCore.Qt.AlignmentFlag.AlignCenter)
        for la in range(n_layers):
            self.grid.addWidget(QtWidgets.QLabel(f"L{la + 1}"), la + 1, 0)
            for h in range(self.n_heads):
                box = QtWidgets.QCheckBox()
                box.setToolTip(f"ablate layer {la + 1}, head {h + 1} ({KIND_NAMES[self.core_kind].lower()})")
                box.toggled.connect(self._sync_text)
                self.grid.addWidget(box, la + 1, h + 1, QtCore.Qt.AlignmentFlag.AlignCenter)
                self.boxes[(la + 1, h + 1)] = box
        self.sync_boxes(self.heads.text())

    def _sync_text(self) -> None:
        self.heads.setText(",".join(f"{la}:{h}" for (la, h), b in self.boxes.items() if b.isChecked()))

    def sync_boxes(self, text: str) -> None:
        try:
            chosen = set(parse_heads(text)) if text.strip() else set()
        except InputError:
            return  # half-typed: leave the boxes; Ablate reports the problem
        for key, box in self.boxes.items():
            box.blockSignals(True)
            box.setChecked(key in chosen)
            box.blockSignals(False)

    def clear(self) -> None:
        """The Clear button: untick every head and remove the last result (nothing is exported)."""
        self.heads.clear()
        self.sync_boxes("")
        self.clear_result(READY)

    def clear_result(self, why: str) -> None:
        """Forget the last report and empty what showed it; ``why`` goes in the status line."""
        self.report = None
        for label in (self.summary, self.topk_caption, self.map_caption):
            label.setText("")
        for t in (self.topk_a, self.topk_b):
            t.set_candidates([], None)
        self.maps.clear()
        self.table.setRowCount(0)
        error_style(self.status, why, False)

    def npz_extra(self) -> dict[str, np.ndarray]:
        """The result on screen for File → Export (.npz), empty without one: ``ablate_kind``
        ("enc"/"dec"/"cross"), ``ablate_heads`` ``[n, 2]`` (layer, head; 1-based) and
        ``ablate_spec`` ("2:3,3:1"), ``ablate_source``, both runs' output tokens
        (``ablate_unablated_tokens``, ``ablate_ablated_tokens``) and log P (nats), the unablated
        output's per-token log P ``ablate_logp_unablated`` / ``ablate_logp_ablated`` /
        ``ablate_logp_change`` ``[tokens]`` (the table), and the two maps drawn
        (``ablate_map_unablated``, ``ablate_map_ablated`` ``[rows, cols]``, masks True = masked,
        axis tokens, titles: :meth:`gui.panels.pair_views.MapRow.npz_arrays`)."""
        if self.report is None:
            return {}
        rep = self.report
        r = rep.result
        rows = token_rows(rep)
        nan = float("nan")
        out = {
            "ablate_kind": np.array(r.kind),
            "ablate_heads": np.array(r.heads, dtype=np.int64).reshape(-1, 2),
            "ablate_spec": np.array(",".join(f"{la}:{h}" for la, h in r.heads)),
            "ablate_source": np.array(r.original.source.text),
            "ablate_unablated_tokens": np.array([s.token for s in r.original.steps], dtype=str),
            "ablate_ablated_tokens": np.array([s.token for s in r.ablated.steps], dtype=str),
            "ablate_unablated_logprob": np.float64(nan if r.original.logprob is None else r.original.logprob),
            "ablate_ablated_logprob": np.float64(nan if r.ablated.logprob is None else r.ablated.logprob),
            "ablate_logp_unablated": np.array([x.before for x in rows], dtype=np.float64),
            "ablate_logp_ablated": np.array([x.after for x in rows], dtype=np.float64),
            "ablate_logp_change": np.array([x.change for x in rows], dtype=np.float64),
        }
        out.update(self.maps.npz_arrays("ablate_map_", ("unablated", "ablated")))
        return out

    # ---------- results ----------
    def show_error(self, reason: str) -> None:
        """An error in the status line (GUI wording). With a result on screen it stays, and the kind
        and ticks go back to the heads of that result, so the ticks always match what is shown."""
        reason = gui_wording(reason)
        kept = ""
        if self.report is not None:
            r = self.report.result
            spec = ",".join(f"{la}:{h}" for la, h in r.heads)
            self.heads.setText(spec)
            self.kind.setCurrentIndex(self.kind.findData(r.kind))  # rebuilds the grid from the text
            self.sync_boxes(spec)
            kept = f" — the result below (heads {spec}, {KIND_NAMES[r.kind].lower()}) stays; the ticks show its heads"
        error_style(self.status, f"{reason}{kept}", True)

    def show_report(self, report, ms: float, selection: tuple[str, int, int], step: int) -> None:
        self.report = report
        r = report.result
        error_style(
            self.status,
            f"ablated {KIND_NAMES[r.kind].lower()} heads {', '.join(f'L{la} H{h}' for la, h in r.heads)} · {ms:.0f} ms",
            False,
        )
        self.refresh(selection, step)

    def refresh(self, selection: tuple[str, int, int], step: int) -> None:
        """Redraw the last report for the head ``selection`` (view kind, 0-based layer, head) and
        the main view's ``step`` (top-k)."""
        if self.report is None:
            return
        rep, font = self.report, self.font()
        a, b = rep.result.original, rep.result.ablated
        la_lp = "—" if a.logprob is None else f"{a.logprob:.3f}"
        lb_lp = "—" if b.logprob is None else f"{b.logprob:.3f}"
        change = "" if a.logprob is None or b.logprob is None else f"{b.logprob - a.logprob:+.3f}"
        same = "" if b.translation != a.translation else " (the same translation)"
        self.summary.setText(
            "<table cellspacing='4'><tr><th></th><th align='left'>translation</th><th>log P (nats)</th></tr>"
            f"<tr><td><b>unablated</b></td><td>{html.escape(a.translation)}</td><td align='right'>{la_lp}</td></tr>"
            f"<tr><td><b>ablated</b></td><td>{html.escape(b.translation)}</td><td align='right'>{lb_lp}</td></tr>"
            f"</table>Δ log P (ablated output − unablated output) = {change}{same}; the unablated output under "
            f"ablation: Δ = {rep.total_change:+.3f}"
        )
        (ta, ca, ka), (tb, cb, kb) = top_k_at(a, step), top_k_at(b, step)
        self.topk_caption.setText(f"Top-k at step {ka} (unablated, left) and step {kb} (ablated, right):")
        for panel, cands, chosen in ((self.topk_a, ta, ca), (self.topk_b, tb, cb)):
            panel.set_font(font)
            panel.set_candidates(cands, chosen)
        kind, layer, head = selection
        self.maps.set_font(font)
        ha, hb = head_map(a, kind, layer, head, "unablated"), head_map(b, kind, layer, head, "ablated")
        mark = (
            " (ablated: its output is zeroed, its weights still shown)"
            if (view_kinds.for_attention(rep.result.kind).name == kind and (layer + 1, head + 1) in rep.result.heads)
            else ""
        )
        self.map_caption.setText(
            f"{ha.title.split(' — ')[-1]}{mark}; select another head in the grid. "
            f"{compare_maps(ha, hb).reason or 'Same shape and tokens in both runs.'}"
        )
        self.maps.show_pair(ha, hb)
        self._fill_table(token_rows(rep))

    def _fill_table(self, rows) -> None:
        self.table.setRowCount(len(rows) + 1)
        total = [sum(r.before for r in rows), sum(r.after for r in rows)]
        cells = [[str(r.step), r.token, f"{r.before:.4f}", f"{r.after:.4f}", f"{r.change:+.4f}"] for r in rows]
        cells.append(["Σ", "total", f"{total[0]:.4f}", f"{total[1]:.4f}", f"{total[1] - total[0]:+.4f}"])
        bold = QtGui.QFont(self.font())
        bold.setBold(True)
        for i, row in enumerate(cells):
            for j, text in enumerate(row):
                item = QtWidgets.QTableWidgetItem(text)
                if i == len(rows):
                    item.setFont(bold)
                self.table.setItem(i, j, item)
