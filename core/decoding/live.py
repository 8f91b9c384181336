"""A live decoder for the app: one sentence encoded once, then stepped, rewound and forked on demand.

Greedy steps choose the argmax on the KV cache; beam runs its search once (on the same encoder
output, with a per-step trace) and then steps through the chosen hypothesis, so every step shown is
one cached decoder step. Forcing a token ("what if the model had said …?") truncates the session
to the fork point, imposes the token(s) and continues to the end; the original stays alongside.
No Qt here: the GUI worker owns one :class:`LiveDecoder` and sends its :class:`LiveState` to the
window.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from core.checkpoints.checkpoint import Checkpoint
from core.decoding.beam import BeamStep, Hypothesis
from core.decoding.session import DecodeSession
from core.decoding.strategy import DecodingStrategy, as_strategy
from core.decoding.translate import Translation, check_finite, session_result
from core.errors import InputError


@dataclass
class LiveState:
    """What the window shows after a command.

    result: the session as it stands (its k = ``len(result.steps)`` steps are the current step);
    live: False for complete results revealed step by step without the model (teacher forcing,
    batch); finished: EOS chosen or budget spent; budget: the most steps this output can take;
    final: the full translation once produced (or from the start with ``show_full``);
    original / fork_point: the translation before the last fork and the step (1-based) whose token
    was forced; batch: all results of a padded batch (``result`` is the one shown);
    path: beam: the output ids being stepped through (EOS included when it ends with one).
    """

    result: Translation
    live: bool = True
    finished: bool = False
    budget: int = 0
    final: str | None = None
    original: Translation | None = None
    fork_point: int | None = None
    batch: list[Translation] = field(default_factory=list)
    path: list[int] = field(default_factory=list)


def complete_state(result: Translation, batch: list[Translation] | None = None) -> LiveState:
    """A finished, non-live state for a result computed in one go (teacher forcing, batch)."""
    return LiveState(
        result, live=False, finished=True, budget=len(result.steps), final=result.translation, batch=list(batch or [])
    )


def branch(session: DecodeSession) -> DecodeSession:
    """A copy of ``session`` with the same steps and cache that can step on independently (the
    caches are shared: a step writes only past every position a cache covers, see
    :mod:`core.transformer.kv_cache`)."""
    new = copy.copy(session)
    new.steps = list(session.steps)
    return new


class LiveDecoder:
    """One sentence, stepped live. Commands: :meth:`step`, :meth:`back`, :meth:`seek`,
    :meth:`fork`, :meth:`unfork`, :meth:`choose_hypothesis`; :meth:`state` after each.

    ``beam``: a :class:`~core.decoding.strategy.DecodingStrategy` or a beam size (1 = greedy);
    ``strategy`` holds it, ``beam`` its beam size.

    Raises:
        InputError: as :func:`core.decoding.translate.translate` (empty text, bad beam/pad).
    """

    def __init__(
        self,
        ckpt: Checkpoint,
        text: str,
        beam: int | DecodingStrategy = 1,
        pad_to: int | None = None,
        top_k: int = 5,
        alpha: float = 0.6,
        should_stop=None,
        show_full: bool = False,
    ) -> None:
        self.strategy = as_strategy(beam)
        self.beam = self.strategy.beam_size
        self.ckpt, self.pad_to, self.alpha, self.show_full = ckpt, pad_to, alpha, show_full
        self.session = DecodeSession(
            ckpt.model, ckpt.src_tokenizer, ckpt.tgt_tokenizer, text, pad_to=pad_to, top_k=top_k
        )  # the one encode
        self.trace: list[BeamStep] = []
        self.path: list[int] | None = None  # beam: ids being stepped through (None = the best hypothesis)
        self.forced: dict[int, int] = {}  # output position (0-based) -> forced id
        self.original: Translation | None = None
        self.fork_point: int | None = None
        self._saved: tuple | None = None  # beam state before a fork
        self.hyps: list[Hypothesis] = self.strategy.search(
            ckpt.model, ckpt.src_tokenizer, text, alpha=alpha, should_stop=should_stop, session=self.session, trace=self.trace
        )  # [] for greedy
        self.final: str | None = self._full().translation if show_full else None

    # ---------- the plan: which token the next step takes ----------
    def _plan(self) -> list[int] | None:
        """Beam: the chosen path (default: the best hypothesis + EOS unless truncated); greedy:
        None (argmax)."""
        if not self.strategy.searches_ahead:
            return None
        if self.path is not None:
            return self.path
        h = self.hyps[0]
        return h.ids + ([] if h.truncated else [self.ckpt.config.eos_id])

    def _advance(self, session: DecodeSession) -> bool:
        """One decoder step of ``session`` following forced tokens, then the plan or argmax.
        A forced token is taken even where the budget before it is spent: the budget counts
        from the end of the forced prefix (:attr:`DecodeSession.max_steps`)."""
        k = len(session.steps)
        if k in self.forced:
            return session.step(force=self.forced[k], forced=True) is not None
        if session.finished:
            return False
        plan = self._plan()
        if plan is not None:
            if k >= len(plan):
                return False
            session.step(force=plan[k])
        else:
            session.step()
        return True

    def _full(self) -> Translation:
        """The complete output of the current path, without moving the session."""
        s = branch(self.session)
        while self._advance(s):
            pass
        return session_result(s, self.strategy, self.hyps, self.trace, self.pad_to)

    @property
    def finished(self) -> bool:
        s = self.session
        plan = self._plan()
        return s.finished or (plan is not None and len(s.steps) >= len(plan))

    # ---------- commands ----------
    def step(self) -> bool:
        """Exactly one decoder step on the KV cache; False when the output is complete."""
        moved = self._advance(self.session)
        if self.finished:
            self.final = self.session.translation
        return moved

    def back(self) -> bool:
        """Undo the last step (``DecodeSession.back``: the cache is truncated, nothing recomputed)."""
        if not self.session.steps:
            return False
        self.session.back()
        return True

    def seek(self, k: int, should_stop=None) -> None:
        """Run or rewind to step ``k`` (clamped to what the output allows)."""
        while len(self.session.steps) > max(k, 0):
            self.back()
        while len(self.session.steps) < k:
            if should_stop is not None:
                should_stop()
            if not self.step():
                break

    def fork(self, k: int, ids: list[int], should_stop=None) -> None:
        """Force ``ids`` as outputs k, k+1, … (step k is 1-based: the token chosen at step k is
        replaced) and continue to the end, greedy or with the beam from the forced prefix.
        The translation before the fork is kept in ``original``; Back from the end returns to
        the fork point.

        Raises:
            InputError: ``ids`` is empty or k is out of range.
        """
        if not ids:
            raise InputError("nothing to force: the word is empty after normalization")
        if not 1 <= k <= len(self.session.steps) + 1:
            raise InputError(f"can only fork at steps 1..{len(self.session.steps) + 1}")
        self.original = self._full()
        self.seek(k - 1)
        self.forced = {p: t for p, t in self.forced.items() if p < k - 1}
        self.forced.update({k - 1 + i: t for i, t in enumerate(ids)})
        if self.strategy.searches_ahead:
            if self._saved is None:
                self._saved = (self.hyps, self.trace, self.path)
            prefix = self.session.output_ids + ids
            self.trace = []
            self.hyps = self.strategy.search(
                self.ckpt.model,
                self.ckpt.src_tokenizer,
                self.session.source.text,
                alpha=self.alpha,
                should_stop=should_stop,
                session=self.session,
                prefix=prefix,
                trace=self.trace,
            )
            self.path = None
        self.fork_point = k
        self.seek(10**9, should_stop)

    def unfork(self) -> None:
        """Drop every forced token and return to the original path at the fork point."""
        if self.fork_point is None:
            return
        k = self.fork_point
        self.forced = {}
        if self._saved is not None:
            self.hyps, self.trace, self.path = self._saved
            self._saved = None
        self.original = self.fork_point = None
        self.seek(k - 1)
        self.final = self._full().translation if self.show_full else None
        self.step()

    def back_to_fork(self) -> bool:
        """Back at the end of a forked output: rewind to the fork point (its forced token still
        shown). Returns False (nothing done) without a fork, or before the end."""
        if self.fork_point is None or not self.finished or len(self.session.steps) <= self.fork_point:
            return False
        self.seek(self.fork_point)
        return True

    def choose_path(self, ids: list[int], finished: bool = True) -> None:
        """Beam: step through the hypothesis ``ids`` (EOS excluded; ``finished`` appends EOS),
        e.g. one clicked in the hypotheses view, and go to its last step. Its maps are those the
        cached decoder computes for it; the steps both paths share are kept, not recomputed.

        Raises:
            InputError: not a beam session, or ``ids`` empty without EOS.
        """
        if not self.strategy.searches_ahead:
            raise InputError("hypotheses exist only with beam search")
        plan = list(ids) + ([self.ckpt.config.eos_id] if finished else [])
        if not plan:
            raise InputError("an empty hypothesis has no steps to show")
        common = 0
        steps = self.session.steps
        while common < min(len(steps), len(plan)) and steps[common].token_id == plan[common]:
            common += 1
        self.seek(common)
        self.path = plan
        self.seek(len(plan))
        self.final = self.tgt_text(plan)

    def tgt_text(self, ids: list[int]) -> str:
        return self.session.tgt_tok.decode(ids)

    def state(self) -> LiveState:
        """The current :class:`LiveState` (a snapshot: later commands do not change it)."""
        s = self.session
        result = session_result(s, self.strategy, self.hyps, self.trace, self.pad_to)
        check_finite(result)
        budget = s.max_steps  # also for beam: the slider must not give away the hypothesis's length
        return LiveState(
            result, True, self.finished, budget, self.final, self.original, self.fork_point, path=list(self._plan() or [])
        )


__all__ = ["LiveDecoder", "LiveState", "complete_state", "branch"]
