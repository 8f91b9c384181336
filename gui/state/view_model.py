"""The app's state without Qt: which result, which step, which view, which layer/head, and the
texts the panels show. :class:`MainWindow` only wires widgets to it; tests drive it directly.

Every change bumps ``version`` and calls the plain-Python callbacks registered with
:meth:`ViewModel.subscribe` (Present mode and the tabs follow the window that way, without
polling). What is drawn from this state is one :class:`gui.state.view_spec.ViewFrame`, built once
per change (:meth:`ViewModel.frame`), which also keeps the selection valid for the result on screen.
Steps follow the decoder: at step k (0 ≤ k ≤ n) the decoder has consumed k inputs (BOS first) and chosen k tokens.
"""

from __future__ import annotations

import html
import logging
import math
from dataclasses import dataclass

from core.decoding.live import LiveState, complete_state
from core.decoding.translate import BeamRow, Translation
from gui.state import view_kinds
from gui.state.result_warnings import result_warnings
from gui.state.view_data import step_text
from gui.state.view_spec import ViewFrame, build_frame

log = logging.getLogger(__name__)


@dataclass
class ReferenceRow:
    """One teacher-forcing step: the reference token and its probability (also outside the
    top-k), the model's own argmax, and the running loss (mean NLL so far, nats/token)."""

    step: int
    token: str
    prob: float
    argmax: str
    hit: bool
    running_loss: float


class ViewModel:
    """GUI state. ``state`` is the latest :class:`LiveState` from the worker (or a complete one);
    ``step`` the shown step; ``kind`` the view; ``selected`` the enlarged (layer, head) or
    (mask index, 0), and the head comes back when the Masks view is left (``head_before_masks``);
    ``show_full`` shows the whole translation before it is produced (when known);
    ``batch_index`` which sentence of a padded batch is shown.

    ``selected`` and ``derived`` are always valid for the result on screen: every change clamps
    them (a head beyond a smaller model's, a derived cell this view lacks) before anyone is told."""

    def __init__(self) -> None:
        self.state: LiveState | None = None
        self.step = 0
        self.kind = view_kinds.DEFAULT
        self.selected = (0, 0)
        self.derived: tuple | None = None  # a derived cell enlarged instead: ("mean", layer) or ("rollout", 0)
        self.head_before_masks = (0, 0)  # the (layer, head) to show again when the Masks view is left
        self.show_full = False
        self.version = 0
        self._listeners: list = []
        self._frame: ViewFrame | None = None

    # ---------- changes ----------
    def subscribe(self, callback) -> None:
        """Call ``callback()`` after every change (on the thread that made it: the GUI thread)."""
        self._listeners.append(callback)

    def unsubscribe(self, callback) -> None:
        if callback in self._listeners:
            self._listeners.remove(callback)

    def _changed(self) -> None:
        self.version += 1
        self._frame = None
        frame = self.frame()
        if frame is not None:  # the selection as the frame clamped it: valid before anyone reads it
            self.selected, self.derived = frame.selected, frame.derived_key
        for callback in list(self._listeners):
            try:
                callback()
            except Exception:
                log.exception("a view-model follower failed: %r", callback)

    def frame(self) -> ViewFrame | None:
        """What is drawn now (:func:`gui.state.view_spec.build_frame`), built once per change and
        the same object for every renderer; None before a result."""
        if self._frame is None and self.state is not None:
            self._frame = build_frame(self.state.result, self.step, self.kind, self.selected, self.derived)
        return self._frame

    @property
    def result(self) -> Translation | None:
        return None if self.state is None else self.state.result

    def set_state(self, state: LiveState | Translation, step: int | None = None) -> None:
        """A new state from the worker. Live states show their own step (the session's length);
        complete results start at ``step`` (default: the end)."""
        if isinstance(state, Translation):
            state = complete_state(state)
        self.state = state
        n = len(state.result.steps) if state.live else self.n_steps
        self.step = n if step is None else max(0, min(step, self.n_steps))
        self._changed()

    def set_batch_index(self, i: int) -> None:
        """Show sentence ``i`` of a padded batch (same step)."""
        st = self.state
        if st is None or not st.batch or not 0 <= i < len(st.batch):
            raise ValueError(f"no batch sentence {i + 1}")
        st.result = st.batch[i]
        st.final = st.result.translation
        self.step = min(self.step, self.n_steps)
        self._changed()

    def set_step(self, k: int) -> int:
        """Show step k (clamped to 0..n_steps) of a complete result; returns the step shown."""
        self.step = max(0, min(int(k), self.n_steps))
        self._changed()
        return self.step

    def set_kind(self, kind: str) -> None:
        """Show view ``kind`` (a name in :mod:`gui.state.view_kinds`; ValueError for another)."""
        new, old = view_kinds.get(kind), view_kinds.get(self.kind)
        if new.is_masks and not old.is_masks:
            self.head_before_masks = (self.selected[0], self.selected[1])  # the Masks view uses selected as a mask index
            self.selected = (0, 0)
        elif not new.is_masks and old.is_masks:
            self.selected = self.head_before_masks  # back to the head shown before (V in Present cycles through Masks)
        self.kind = kind
        if self.derived and self.derived[0] not in new.derived:
            self.derived = None  # e.g. the rollout exists for the encoder only; the masks have no derived cells
        self._changed()

    def select(self, layer: int, head: int) -> None:
        self.selected = (int(layer), int(head))
        self.derived = None
        self._changed()

    def select_derived(self, key: tuple) -> None:
        """Enlarge a derived cell (gui/state/derived.py): ("mean", layer) also selects that layer."""
        self.derived = tuple(key)
        if key[0] == "mean":
            self.selected = (int(key[1]), self.selected[1])
        self._changed()

    def set_show_full(self, on: bool) -> None:
        self.show_full = bool(on)
        self._changed()

    # ---------- derived ----------
    @property
    def n_steps(self) -> int:
        """Steps the slider can reach: decoder rows computed so far (a batch row: the batch's T)."""
        r = self.result
        return 0 if r is None else int(r.maps.decoder_self.shape[2])

    @property
    def slider_max(self) -> int:
        """Live: the output budget until finished (moving there runs the model), then n."""
        st = self.state
        if st is None:
            return 0
        return self.n_steps if (st.finished or not st.live) else max(st.budget, self.n_steps)

    @property
    def live(self) -> bool:
        return self.state is not None and self.state.live

    @property
    def teacher_forced(self) -> bool:
        return self.result is not None and self.result.mode == "teacher_forced"

    def tokens_at(self, k: int | None = None) -> list[str]:
        r = self.result
        k = self.step if k is None else k
        return [s.token for s in r.steps[:k]] if r else []

    def text_at(self, k: int | None = None) -> str:
        """The output after step k as text: the step's ``text``, made by the target tokenizer's
        ``decode`` like the translation itself (never joined here from token labels). A batch
        row past its sentence's end (pads) keeps the sentence's last text."""
        r = self.result
        k = self.step if k is None else k
        if r is None or k <= 0 or not r.steps:
            return ""
        return r.steps[min(k, len(r.steps)) - 1].text

    def full_text(self) -> str | None:
        """The whole translation, or None while it must stay hidden (not produced yet and
        ``show_full`` off). Teacher forcing shows the reference."""
        st = self.state
        if st is None:
            return None
        if self.teacher_forced:
            return st.result.reference or ""
        produced = st.finished and self.step >= len(st.result.steps)
        if produced or (st.final is not None and (self.show_full or not st.live)):
            return st.final if st.final is not None else st.result.translation
        return None

    def warnings(self) -> list[str]:
        """Short warnings about the result on screen, for the translation line and Present mode's
        caption: a cut input or reference, characters shown as [UNK], input that is not Korean, an
        output stopped at the length limit, and a low sentence score once the translation is
        complete (:mod:`gui.state.result_warnings`, :mod:`core.decoding.confidence`)."""
        return result_warnings(self.state, complete=self.full_text() is not None)

    def confidence_text(self) -> str:
        """The sentence score as shown beside a complete translation: "confidence −0.13 nats/token"
        (mean log-probability per token), or "" while incomplete or in teacher forcing."""
        r = self.result
        if r is None or r.confidence is None or self.full_text() is None:
            return ""
        return f"confidence {r.confidence:.2f} nats/token"

    def translation_html(self) -> str:
        """The translation line: grows with the steps; the full text only once produced, with its
        sentence score beside it. Warnings (:meth:`warnings`) come first: a long translation shows
        only its first lines, and a cut input makes long translations."""
        if self.result is None:
            return "—"
        k = self.step
        tokens = self.tokens_at(k)
        label = "Reference (teacher forcing)" if self.teacher_forced else "Translation"
        full = self.full_text()
        # in red, without a symbol: a glyph from a fallback font (⚠) makes the line a pixel taller
        warnings = self.warnings()
        first = (
            f"<span style='color:#b00000'><b>{' · '.join(html.escape(w) for w in warnings)}</b></span> &nbsp;" if warnings else ""
        )
        score = self.confidence_text()
        extra = f" &nbsp;<span style='color:#666'>{html.escape(score)}</span>" if score and not self.result.low_confidence else ""
        head = (
            f"{first}<b>{label}:</b> {html.escape(full)}{extra}<br>"
            if full is not None
            else f"{first}<b>{label}:</b> <span style='color:#888'>(not produced yet — step on)</span>{extra}<br>"
        )
        return (
            f"{head}<b>After step {k}:</b> {html.escape(self.text_at(k)) or '…'}"
            f" &nbsp; <span style='color:#666'>tokens: {html.escape(' '.join(tokens)) or '(none yet)'}</span>"
        )

    def step_description(self) -> str:
        r = self.result
        if r is None:
            return "step 0"
        if self.step > len(r.steps):
            return f"step {self.step} / {self.n_steps}: [PAD] (this sentence ended; the batch goes on)"
        text = step_text(r, self.step)
        if self.live and self.state is not None and not self.state.finished:  # the total is not known while decoding
            text = text.replace(f"step {self.step} / {len(r.steps)}", f"step {self.step} (decoding live)", 1)
        return text

    def candidates(self) -> tuple[list[tuple[str, float]], str | None, list[float] | None]:
        """Top-k ``[(token, probability)]`` of the step shown, the token taken, and (sampling) each
        candidate's probability in the distribution the step drew from (None otherwise)."""
        r = self.result
        k = self.step
        if r is None or k == 0 or k > len(r.steps):
            return [], None, None
        st = r.steps[k - 1]
        return st.top_k, st.token, st.shaped

    def side_by_side(self) -> list[tuple[str, str, float | None]] | None:
        """After a fork: ``[(label, translation, total log-probability in nats)]`` for the
        original and the forked output; None without a fork."""
        st = self.state
        if st is None or st.original is None:
            return None
        fork = st.result
        forked_text = fork.translation if st.finished else (st.final or fork.translation)
        return [
            ("original", st.original.translation, st.original.logprob),
            (f"forked at step {st.fork_point}", forked_text, fork.logprob),
        ]

    def reference_rows(self) -> list[ReferenceRow]:
        """Teacher forcing: one row per step up to the step shown ([] otherwise)."""
        r = self.result
        if r is None or not self.teacher_forced:
            return []
        return [
            ReferenceRow(i + 1, s.token, math.exp(s.logprob), s.argmax or "", s.argmax == s.token, float(s.running_loss))
            for i, s in enumerate(r.steps[: self.step])
            if s.logprob is not None and s.running_loss is not None  # (teacher forcing fills both at every step)
        ]

    def loss_text(self) -> str:
        """Mean NLL and perplexity of the whole reference, and whether the causal mask was on."""
        r = self.result
        if r is None or r.loss is None:
            return ""
        mask = "on" if r.causal else "OFF (the decoder sees the future)"
        return (
            f"mean NLL {r.loss:.3f} nats/token · perplexity {r.perplexity:.2f} · causal mask {mask} · "
            f"decoder self-attention on the next token: {100 * self.next_token_attention():.1f}%"
        )

    def next_token_attention(self) -> float:
        """Mean decoder self-attention weight a query t gives to key t + 1 (the next token), over
        layers, heads and t < T − 1: exactly 0 under the causal mask."""
        r = self.result
        w = r.maps.decoder_self if r is not None else None
        if w is None or w.shape[-1] < 2:
            return 0.0
        t = w.shape[-1]
        return float(w[:, :, range(t - 1), range(1, t)].mean())

    def beam_rows(self) -> list[tuple[str, BeamRow, bool]]:
        """Beam: the beam after search step ``step`` (its live hypotheses), then every hypothesis
        finished up to that step, as ``(kind, row, current)``: kind 'live' or 'finished';
        ``current`` marks the hypothesis being stepped through (its ids start the path). At step 0
        the beam is [BOS] alone: no rows (the beam after step 1 is shown at step 1, as the slider counts)."""
        r, st = self.result, self.state
        if r is None or not r.beam_trace or self.step == 0:
            return []
        k = max(1, min(self.step, len(r.beam_trace)))
        path = st.path if st is not None else []
        out = []
        for row in r.beam_trace[k - 1]:
            if not row.finished:
                out.append(("live", row, path[: len(row.ids)] == row.ids))
        for rows in r.beam_trace[:k]:
            for row in rows:
                if row.finished:
                    out.append(("finished", row, len(path) == len(row.ids) + 1 and path[: len(row.ids)] == row.ids))
        return out
