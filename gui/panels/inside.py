"""Inside one attention step (paper Eq. 1, softmax(q·Kᵀ/√d_k + mask)·V) for the head the main
window enlarges and one query row, on the model's real numbers.

Shown in order: ① q ``[d_head]``, ② K ``[keys, d_head]``, ③ the scores q·k/√d_k, ④ the scores
with the mask the model was given added (masked cells read "−∞", True = masked), ⑤ the softmax
weights — the **same values** as the heatmap's row (checked with ``np.array_equal`` before they
are drawn), ⑥ V ``[keys, d_head]`` and ⑦ the head's output Σ weights·v (before W^O). Every number
comes from :func:`core.analysis.inside.inside_of_result`, run in the worker thread
(:meth:`gui.workers.model_worker.ModelWorker.compute`, never beside a translation); nothing is recomputed here.
The query is the spin box, or a click on a row of the enlarged heatmap.
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from core.analysis.inside import InsideStep, inside_of_result
from gui.panels.pair_views import DETACH_TEXT
from gui.panels.worker_tab import WorkerTab
from gui.state import view_kinds
from gui.state.view_data import quote
from gui.widgets.colormap import Colormap
from gui.widgets.labels import MAX_CHARS
from gui.widgets.strips import PopOut, StripStack

SIGNED = "CET-D1"  # diverging colour map for q, K, V, scores and the output (0 = grey)
HINT = "Translate a sentence (Enter), then pick a head in the grid: the inside of its attention step appears here."
TITLES = (
    "① q = x·W<sup>Q</sup> of this head [d_head]",
    "② K: one key per row [keys, d_head]",
    "③ scores q·k / √d_k",
    "④ + the mask given (True = masked → −∞)",
    "⑤ softmax = the weights (= the heatmap's row)",
    "⑥ V: one value per row [keys, d_head]",
    "⑦ output = Σ weights · v, the head's output before W<sup>O</sup> [d_head]",
)


def problem_with(vm) -> str | None:
    """Why the inside view cannot be shown for the view model's state, or None when it can."""
    if vm.result is None:
        return HINT
    view = view_kinds.get(vm.kind)
    if view.is_masks:
        return "Choose encoder, decoder or cross-attention above: the masks view has no attention step."
    if not vm.live:
        return (
            "The inside view replays decoded output (greedy or beam); teacher forcing and padded batches "
            "are not replayed. Clear Reference / Batch with and translate again."
        )
    if getattr(vm, "derived", None):
        return "The enlarged cell is derived (mean over heads or rollout): click a single head to open its step."
    if view.follows_steps and vm.step == 0:
        return "No decoder step yet: press Step ▶ (→). Each step adds one query row."
    return None


class InsidePanel(WorkerTab):
    """The tab. ``step`` is the :class:`InsideStep` shown (None with ``message``); ``heatmap_row``
    the enlarged map's row it was checked against; ``strips`` the seven matrices drawn."""

    name = "inside"
    tab_title = "Inside one step"
    lazy_tab_titles = (tab_title,)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.step: InsideStep | None = None
        self.heatmap_row: np.ndarray | None = None
        self._seen: tuple | None = None
        self._ranged: tuple | None = None
        self.shown_key: tuple | None = None  # the _key() of the step on screen
        self._pending: tuple | None = None  # (row of the heatmap, key) of the request in flight
        top = QtWidgets.QHBoxLayout()
        top.addWidget(QtWidgets.QLabel("Query row:"))
        self.query = QtWidgets.QSpinBox()
        self.query.setRange(1, 1)
        self.query.setToolTip("the query (row of the enlarged heatmap, from 1); or click a heatmap row")
        top.addWidget(self.query)
        top.addStretch(1)
        self.popout_button = QtWidgets.QPushButton(DETACH_TEXT)
        top.addWidget(self.popout_button)
        self.message = QtWidgets.QLabel(HINT)
        self.message.setWordWrap(True)
        self.message.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.plots = StripStack()
        signed = Colormap.named(SIGNED)
        self.strips = [self.plots.add_strip(ctx.style.cmap if i == 4 else signed, diverging=i != 4) for i in range(7)]
        scroll = QtWidgets.QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # fit the width
        self.plots.setMinimumWidth(120)
        scroll.setWidget(self.plots)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(top)
        layout.addWidget(self.message)
        layout.addWidget(scroll, 1)
        self.plots.hide()
        self.popout = PopOut(ctx.tabs, self, self.tab_title)
        self.popout_button.clicked.connect(self.popout.toggle)
        self.query.valueChanged.connect(lambda _: self.refresh())
        ctx.map_row_clicked.connect(self._on_map_row_clicked)

    # ---------- following the view model (while shown: gui/panels/worker_tab.py) ----------

    def refresh(self) -> None:
        """Request the inside of the selected head and query when any of them changed (the
        request only while the panel is visible: no model work for a hidden tab)."""
        vm = self.ctx.vm
        key = self._key()
        if key == self._seen or (key == self._ranged and not self.isVisible()):
            return
        problem = problem_with(vm)
        if problem is not None:
            self._seen = key
            self.show_message(problem)
            return
        v = vm.frame().view  # the view's maps as drawn (problem_with ruled out the Masks view)
        rows = v.weights.shape[2]
        if self.query.maximum() != rows:
            self.query.blockSignals(True)
            self.query.setRange(1, rows)
            self.query.blockSignals(False)
        self._ranged = key  # hidden: the range follows, no model work until the tab is shown
        if not self.isVisible():
            return
        q = self.query.value()
        self._seen = key = key[:4] + (q,) + key[5:]
        layer, head = vm.selected  # the view model keeps it within the result
        self._pending = (np.array(v.weights[layer, head, q - 1]), key)
        result, kind = vm.result, view_kinds.get(vm.kind).core_kind
        self.message.setText(f"computing the inside of layer {layer + 1}, head {head + 1}, query {q} …")
        self.ask(lambda ck: inside_of_result(ck, result, kind, layer + 1, head + 1, q))

    @property
    def shows_message_only(self) -> bool:
        """True when the panel looked at the state and explained in words why there is no step
        (it never asked the worker)."""
        return self._tag is None and self._seen is not None

    def _key(self) -> tuple:
        """What the panel shows depends on: result, step, view, head, query, font, derived cell, colours."""
        vm, style = self.ctx.vm, self.ctx.style
        return (
            id(vm.result),
            vm.step,
            vm.kind,
            tuple(vm.selected),
            self.query.value(),
            style.font.pointSize(),
            getattr(vm, "derived", None),
            id(style.cmap),
        )

    def catch_up(self) -> None:
        """Built after the start: the row last clicked on the enlarged map (remembered by the
        window in ``ctx.extras["map_row"]``) is the query, as if the tab had heard the click."""
        row = self.ctx.extras.get("map_row")
        if row is not None:
            self._on_map_row_clicked(row)

    def _on_map_row_clicked(self, row: int) -> None:
        """A click on a row of the enlarged heatmap (0-based) chooses that query."""
        if view_kinds.get(self.ctx.vm.kind).is_masks:
            return
        self.query.setMaximum(max(self.query.maximum(), row + 1))
        self.query.setValue(row + 1)

    def on_failed(self, reason: str) -> None:
        self.show_message(f"⚠ {reason}")

    def on_computed(self, step) -> None:
        if not isinstance(step, InsideStep):
            return
        row, key = self._pending
        w = step.weights.numpy()
        n = w.size
        if not (np.array_equal(w, row[:n]) and not row[n:].any()):
            self.show_message("⚠ the recorded weights differ from the heatmap's row; not shown (please report)")
            return
        self.heatmap_row = row
        self.shown_key = key
        self.show_step(step)

    # ---------- drawing ----------
    def show_message(self, text: str) -> None:
        """No step to show: the reason in words, no numbers."""
        self.step = None
        self.heatmap_row = None
        self.message.setText(text)
        self.plots.hide()
        for s in self.strips:
            s.clear()

    def show_step(self, st: InsideStep) -> None:
        """Draw the seven matrices of ``st`` (the arrays ValueStrip keeps are st's own values)."""
        self.step = st
        font = QtGui.QFont(self.ctx.style.font)
        for s in self.strips:
            s.set_font(font)
        self.strips[4].set_colormap(self.ctx.style.cmap)
        d = st.q.numel()
        dims = [str(i + 1) for i in range(d)]
        keys, query = list(st.key_tokens), [quote(st.query_token)]  # ⟨'⟩ stays readable
        kv_rows = keys
        mask = np.zeros(len(keys), bool) if st.mask is None else st.mask.numpy()
        no_mask = " — no mask was given here (every key may be attended)" if st.mask is None else ""
        self.strips[0].set(st.q.numpy()[None], query, dims, TITLES[0])
        self.strips[1].set(st.k.numpy(), kv_rows, dims, TITLES[1])
        self.strips[2].set(st.scores.numpy()[None], query, keys, f"{TITLES[2]} (√d_k = √{d})")
        self.strips[3].set(st.masked_scores.numpy()[None], query, keys, TITLES[3] + no_mask, neg_inf=mask[None])
        self.strips[4].set(st.weights.numpy()[None], query, keys, TITLES[4], levels=(0.0, 1.0))
        self.strips[5].set(st.v.numpy(), kv_rows, dims, TITLES[5])
        self.strips[6].set(st.output.numpy()[None], query, dims, TITLES[6])
        fm = QtGui.QFontMetrics(font)
        longest = max(fm.horizontalAdvance(t) for t in [*keys, *query, "0000"])
        left = min(longest, fm.averageCharWidth() * MAX_CHARS) + 16  # one width: columns line up
        for s in self.strips:
            s.plot.getAxis("left").setWidth(left)
        line = fm.height()
        self.plots.set_row_heights([5 * line + s.matrix.shape[0] * max(line, 14) + 24 for s in self.strips])
        kv = (
            f"{len(keys)} keys (cached decoding: only the keys computed up to this query)"
            if st.kind == "dec"
            else f"{len(keys)} keys"
        )
        title = view_kinds.for_attention(st.kind).title
        self.message.setText(
            f"<b>{title}</b> — layer {st.layer}, head {st.head}, query {st.query} "
            f"{quote(st.query_token)}: d_head = {d}, {kv}. Eq. 1: softmax(q·Kᵀ/√d_k + mask)·V."
        )
        self.plots.show()

    def npz_extra(self) -> dict[str, np.ndarray]:
        """The step on screen for File → Export (.npz), the arrays the strips show: ``inside_q``
        ``[d_head]``, ``inside_k`` / ``inside_v`` ``[keys, d_head]``, ``inside_scores``,
        ``inside_masked_scores`` (−inf where masked), ``inside_mask`` (True = masked; all False
        with ``inside_mask_given`` False), ``inside_weights`` ``[keys]``, ``inside_output``
        ``[d_head]``, ``inside_key_tokens`` and ``inside_what`` (kind, layer, head, query 1-based,
        query token). Empty when no step is shown."""
        st = self.step
        if st is None or self.shown_key != self._key():
            return {}  # nothing shown, or a hidden tab still showing an earlier state
        strip = [s.matrix for s in self.strips]
        given = st.mask is not None
        return {
            "inside_q": strip[0][0],
            "inside_k": strip[1],
            "inside_scores": strip[2][0],
            "inside_masked_scores": strip[3][0],
            "inside_weights": strip[4][0],
            "inside_v": strip[5],
            "inside_output": strip[6][0],
            "inside_mask_given": np.bool_(given),
            "inside_mask": st.mask.numpy() if given else np.zeros(len(st.key_tokens), bool),
            "inside_key_tokens": np.array(st.key_tokens),
            "inside_what": np.array([st.kind, str(st.layer), str(st.head), str(st.query), st.query_token]),
        }
