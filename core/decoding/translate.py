"""One call from text to a full, displayable result: translation, per-step top-k and the
attention maps with their masks. Used by the CLI and the app alike."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from core.checkpoints.checkpoint import Checkpoint
from core.decoding.beam import BeamStep, Hypothesis
from core.decoding.confidence import LOW_CONFIDENCE_NATS, NOT_KOREAN, has_hangul, is_low_confidence, mean_logprob, symbols_only
from core.decoding.experiments import force_prefix, reference_stats, step_logprob, teacher_forced_pass
from core.decoding.sampling import shaped_distribution
from core.decoding.session import DecodeSession, Source, prepare_source
from core.decoding.strategy import DecodingStrategy, as_strategy
from core.errors import InputError
from core.textio import clean_text
from core.tokenizers.bpe import BOS, EOS
from core.transformer.maps import AttentionMaps


@dataclass
class StepInfo:
    """Output token at one step and the top-k candidates ``[(token, probability)]``, highest first.

    logprob: log p(token) in nats; forced: imposed by the user (a forked prefix), not chosen.
    Teacher forcing only: ref_logprob = log p(reference token) (equal to logprob), argmax = the
    model's own most likely token, running_loss = mean NLL (nats/token) of steps 1..this one.
    text: the output so far as the app shows it after this step (the target tokenizer's
    ``decode`` of the ids of steps 1..this one, see :func:`with_texts`).
    """

    token: str
    token_id: int
    top_k: list[tuple[str, float]]
    logprob: float | None = None
    forced: bool = False
    argmax: str | None = None
    running_loss: float | None = None
    top_ids: list[int] = field(default_factory=list)  # the ids of ``top_k``, same order
    shaped: list[float] | None = None  # sampling: each top_k token's probability after temperature and the cut
    text: str = ""


@dataclass
class BeamRow:
    """One hypothesis in the beam view: output ids/tokens (EOS excluded), log P in nats, the
    length-normalised GNMT score log P / lp(|Y|), whether it finished (ended with EOS), and its
    text (the target tokenizer's ``decode`` of ``ids``)."""

    ids: list[int]
    tokens: list[str]
    logprob: float
    score: float
    finished: bool
    text: str = ""


@dataclass
class Translation:
    """Everything the app shows for one sentence. ``mode``: greedy, beam or teacher_forced.
    ``maps`` rows are decoder inputs (BOS first); ``notice`` explains any truncation.

    logprob: total log P(output | source) in nats, EOS included (free-running modes).
    In teacher forcing ``translation`` is the model's argmax at each reference position, ``loss``
    the mean NLL (nats/token) of the reference and ``causal`` whether the causal mask was on.
    ``beam_trace``: the beam after every search step (beam mode): per step the live hypotheses
    then those that finished at that step, as :class:`BeamRow`. ``hypotheses``: the search's best
    (text, GNMT score, truncated), best first; ``hypothesis_logprobs`` their total log P (nats), in the
    same order (the greedy hypothesis that competes in the search is not in the trace); ValueError when
    it is given with another length.
    """

    source: Source
    translation: str
    steps: list[StepInfo]
    maps: AttentionMaps
    mode: str
    beam: int = 1
    hypotheses: list[tuple[str, float, bool]] = field(default_factory=list)
    notice: str = ""
    reference: str | None = None
    logprob: float | None = None
    loss: float | None = None
    causal: bool = True
    beam_trace: list[list[BeamRow]] = field(default_factory=list)
    hypothesis_logprobs: list[float] = field(default_factory=list)
    not_korean: bool = False
    model_output: str | None = None
    decoding: str = ""  # the strategy in words: "greedy", "beam 4", "sampling T=0.8 seed 1"

    @property
    def confidence(self) -> float | None:
        """The sentence score: mean log-probability per output token, EOS included (nats; 0 is
        certain), from the steps on screen (:mod:`core.decoding.confidence`). None in teacher
        forcing (the reference is given, not chosen) and before any step."""
        if self.mode == "teacher_forced" or not self.steps:
            return None
        return mean_logprob(sum(s.logprob for s in self.steps if s.logprob is not None), len(self.steps))

    @property
    def low_confidence(self) -> bool:
        """True when :attr:`confidence` is below :data:`~core.decoding.confidence.LOW_CONFIDENCE_NATS`."""
        return is_low_confidence(self.confidence)

    def __post_init__(self) -> None:
        if self.hypothesis_logprobs and len(self.hypothesis_logprobs) != len(self.hypotheses):
            raise ValueError(f"{len(self.hypothesis_logprobs)} log P for {len(self.hypotheses)} hypotheses")

    @property
    def perplexity(self) -> float | None:
        """exp(loss): the teacher-forced perplexity, or None outside teacher forcing."""
        return None if self.loss is None else math.exp(self.loss)

    def to_json(self) -> dict:
        """A JSON-ready dict (see ``python -m core translate --json``); masks True = masked."""
        m = self.maps
        out = {
            "source": clean_text(self.source.text),  # undecodable bytes as U+FFFD, valid UTF-8 out
            "translation": self.translation,
            "mode": self.mode,
            "beam": self.beam,
            "reference": self.reference,
            "decoding": self.decoding or self.mode,
            "notice": self.notice,
            "not_korean": self.not_korean,
            "confidence": None if self.confidence is None else round(self.confidence, 4),
            "low_confidence": self.low_confidence,
            "low_confidence_below": LOW_CONFIDENCE_NATS,
            "src_tokens": m.src_tokens,
            "tgt_tokens": m.tgt_tokens,
            "logprob": None if self.logprob is None else round(self.logprob, 6),
            "steps": [_step_json(s, self.mode == "teacher_forced") for s in self.steps],
            "hypotheses": [
                {"text": t, "score": round(sc, 6), "truncated": tr}
                | ({"logprob": round(self.hypothesis_logprobs[i], 6)} if i < len(self.hypothesis_logprobs) else {})
                for i, (t, sc, tr) in enumerate(self.hypotheses)
            ],
            "beam_trace": [
                [
                    {"tokens": b.tokens, "logprob": round(b.logprob, 6), "score": round(b.score, 6), "finished": b.finished}
                    for b in rows
                ]
                for rows in self.beam_trace
            ],
            "attention": m.to_json(),
            "masks": {
                "src_key_padding": m.src_key_padding_mask.tolist(),
                "tgt_key_padding": m.tgt_key_padding_mask.tolist(),
                "causal": m.causal_mask.tolist(),
                "applied": None if m.applied is None else m.applied.to_json(),
            },
        }
        if self.mode == "teacher_forced" and self.loss is not None:  # (teacher forcing always has its loss)
            out |= {"loss": round(self.loss, 6), "perplexity": round(math.exp(self.loss), 6), "causal": self.causal}
        return out


def _step_json(s: StepInfo, teacher_forced: bool) -> dict:
    d = {
        "token": s.token,
        "id": s.token_id,
        "top_k": [[t, round(p, 6)] for t, p in s.top_k],
        "logprob": None if s.logprob is None else round(s.logprob, 6),
        "forced": s.forced,
    }
    if s.shaped is not None:
        d["top_k_sampled_from"] = [round(p, 6) for p in s.shaped]
    if teacher_forced:
        loss = None if s.running_loss is None else round(s.running_loss, 6)
        d |= {"ref_logprob": d["logprob"], "argmax": s.argmax, "running_loss": loss}
    return d


def with_texts(steps: list[StepInfo], tgt_tok) -> list[StepInfo]:
    """Fill each step's ``text``: ``tgt_tok.decode`` of the ids of the steps up to and including
    it. The whole prefix is decoded each time (text is not a sum of per-token pieces: a
    SentencePiece word mark, an unk's spacing and the stripped ends depend on the neighbours), so
    the line after the last step is exactly the translation. Returns ``steps``."""
    ids = [s.token_id for s in steps]
    for k, s in enumerate(steps):
        s.text = tgt_tok.decode(ids[: k + 1])
    return steps


def session_steps(session: DecodeSession) -> list[StepInfo]:
    """The session's steps as :class:`StepInfo` (with each chosen token's log-probability)."""
    return with_texts(
        [
            StepInfo(
                s.token,
                s.token_id,
                [(t, p) for t, _, p in s.top_k],
                step_logprob(s.logits, s.token_id),
                s.forced,
                top_ids=[i for _, i, _ in s.top_k],
            )
            for s in session.steps
        ],
        session.tgt_tok,
    )


def session_result(
    session: DecodeSession,
    beam: int | DecodingStrategy = 1,
    hyps: list[Hypothesis] | None = None,
    trace: list[BeamStep] | None = None,
    pad_to: int | None = None,
) -> Translation:
    """A displayable :class:`Translation` of the session as it stands now (any number of steps,
    finished or not): what the app shows while stepping live. ``beam``: the strategy (or its beam
    size, 1 = greedy) that gives ``mode`` and ``beam``; ``hyps``/``trace``: beam results."""
    strategy = beam if isinstance(beam, DecodingStrategy) else DecodingStrategy.from_beam_size(beam)
    tgt_tok = session.tgt_tok
    steps = session_steps(session)
    if strategy.is_sampling:  # the distribution each step drew from, beside the model's own
        for info, s in zip(steps, session.steps):
            p = shaped_distribution(s.logits, strategy.temperature, strategy.sample_top_k, strategy.top_p)
            info.shaped = [float(p[i]) for i in info.top_ids]
    result = Translation(
        session.source,
        session.translation,
        steps,
        session.maps(),
        strategy.name,
        strategy.beam_size,
        [(tgt_tok.decode(h.ids), h.score, h.truncated) for h in hyps or []],
        session.source.notice,
        logprob=sum(s.logprob or 0.0 for s in steps) if steps else None,  # (a decoded step has its logprob)
        beam_trace=beam_table(trace or [], tgt_tok),
        hypothesis_logprobs=[h.logprob for h in hyps or []],
        decoding=str(strategy),
    )
    if not has_hangul(session.source.text):
        result.not_korean = True
        result.notice = _join(result.notice, NOT_KOREAN)
    shown = " ".join(clean_text(session.source.text).split())  # as typed, whitespace collapsed
    if session.finished and symbols_only(shown):
        # nothing to translate (emoji, symbols): shown unchanged; the model's own output is kept and named
        result.model_output = result.translation
        result.translation = shown
        result.notice = _join(result.notice, f"only symbols: passed through unchanged (the model wrote {result.model_output!r})")
    n_unk = session.source.tokens.count("[UNK]")
    if n_unk:
        result.notice = _join(result.notice, f"{n_unk} character(s) unknown to the model are shown as [UNK]")
    if pad_to is not None and pad_to < session.source.n_real:
        result.notice = _join(
            result.notice, f"pad-to {pad_to} is shorter than the {len(session.source.ids)} source positions: no padding added"
        )
    if session.truncated:
        n_prefix = session.prefix_len
        limit = (
            f"{session.max_steps - n_prefix} tokens after the {n_prefix}-token prefix"
            if n_prefix
            else f"{session.max_steps} tokens"
        )
        result.notice = _join(result.notice, f"output stopped at the length limit ({limit}) without [EOS]")
    return result


def beam_table(trace: list[BeamStep], tgt_tok) -> list[list[BeamRow]]:
    """The search trace as rows per step (live first, then those finished at that step)."""
    return [
        [
            BeamRow(h.ids, tgt_tok.ids_to_tokens(h.ids), h.logprob, h.score, done, tgt_tok.decode(h.ids))
            for done, hs in ((False, bs.live), (True, bs.finished))
            for h in hs
        ]
        for bs in trace
    ]


def replay(session: DecodeSession, hyp: Hypothesis, n_forced: int = 0) -> None:
    """Step ``session`` (from where it stands) through hypothesis ``hyp`` (+ EOS unless truncated),
    so its maps and top-k are those the cached decoder computes; the first ``n_forced`` are marked
    forced."""
    ids = hyp.ids + ([] if hyp.truncated else [session.model.config.eos_id])
    for i, tid in enumerate(ids[len(session.steps) :], start=len(session.steps)):
        if session.step(force=tid, forced=i < n_forced) is None:
            break


def prefix_word_notice(session: DecodeSession, n_prefix: int) -> str | None:
    """A notice when the first token the model chose after a forced prefix continues the prefix's
    last word instead of starting a new one (``--prefix "He"`` → "Help …"): the prefix is forced as
    subword tokens, so its last word may grow. None when it starts a new word, is punctuation or
    the end, or when there is no prefix."""
    steps = session.steps
    if not n_prefix or len(steps) <= n_prefix:
        return None
    nxt, last = steps[n_prefix].token, steps[n_prefix - 1].token
    if nxt.startswith("▁") or not nxt[:1].isalnum() or not last[-1:].isalnum() or nxt.startswith("["):
        return None
    word = last.lstrip("▁")
    return (
        f"the model continued the prefix's last word ('{word}' + '{nxt}'): a prefix is forced as subword "
        f"tokens, not whole words, so the output does not start with the word '{word}'"
    )


def prefix_ids(session: DecodeSession, prefix: str | None) -> list[int]:
    """Target ids of a forced prefix text ([] for None). Raises InputError when it is empty."""
    if prefix is None:
        return []
    ids = session.tgt_tok.encode(prefix).ids
    if not ids:
        raise InputError("the prefix is empty after normalization")
    return ids


def translate(
    ckpt: Checkpoint,
    text: str,
    beam: int | DecodingStrategy = 1,
    pad_to: int | None = None,
    reference: str | None = None,
    top_k: int = 5,
    alpha: float = 0.6,
    should_stop=None,
    prefix: str | None = None,
    causal: bool = True,
) -> Translation:
    """Translate ``text``: tokenize and encode once, then take exactly one path.

    - greedy (``beam`` 1 or :meth:`DecodingStrategy.greedy`): a :class:`DecodeSession` steps on its KV cache;
    - beam (``beam`` k >= 2 or :meth:`DecodingStrategy.beam`): :meth:`DecodingStrategy.search` (beam
      search) on the same encoder output picks the best hypothesis, which is replayed step by step
      so its maps and top-k are exactly those the cached decoder computes;
    - teacher forcing (``reference``): one parallel decoder pass over the reference (maps, per-step
      reference log-probability, argmax, running loss; ``causal=False`` drops the causal mask).

    ``prefix``: English text whose tokens are forced as the first outputs ("what if the model had
    said …?"); decoding then continues greedily or with the beam, with the whole output budget
    counted after the prefix. ``should_stop()`` is polled between steps (cancellation).

    Every shortening is reported in ``notice`` (and so on the CLI's stderr, in its JSON and in the
    app's status bar): a source cut to the model's ``max_len``, an output stopped by the length
    budget, and a reference cut to fit the decoder (then the last step's target is the reference's
    real next token, never an ``[EOS]`` the reference does not have).

    Raises:
        InputError: empty input, bad ``pad_to``/``beam`` (see :data:`core.defaults.MAX_BEAM`),
            an empty reference or prefix, a prefix with a reference, or ``causal=False`` without
            a reference.
    """
    strategy = as_strategy(beam)
    if top_k < 1:
        raise InputError("top-k must be at least 1")
    if not causal and reference is None:
        raise InputError("the causal mask can only be switched off in teacher forcing (give a reference)")
    if reference is not None and prefix is not None:
        raise InputError("a prefix cannot be combined with a reference (teacher forcing feeds the whole reference)")
    model, src_tok, tgt_tok = ckpt.model, ckpt.src_tokenizer, ckpt.tgt_tokenizer
    session = DecodeSession(model, src_tok, tgt_tok, text, pad_to=pad_to, top_k=top_k)  # the one encode
    if reference is not None:
        result = reference_result(session, reference, causal, pad_to)
    else:
        forced = prefix_ids(session, prefix)
        trace: list[BeamStep] = []
        hyps = strategy.search(
            model, src_tok, text, alpha=alpha, should_stop=should_stop, session=session, prefix=forced, trace=trace
        )
        if strategy.searches_ahead:
            replay(session, hyps[0], len(forced))
        else:
            force_prefix(session, forced)
            while not session.finished:
                if should_stop is not None:
                    should_stop()
                session.step()
        result = session_result(session, strategy, hyps, trace, pad_to)
        n_fit = sum(s.forced for s in session.steps)
        if len(forced) > n_fit:  # the budget counts after the prefix: only max_len can cut it
            result.notice = _join(
                result.notice,
                f"the prefix has {len(forced)} tokens; only {n_fit} fit the model's {model.config.max_len - 1} output positions",
            )
        result.notice = _join(result.notice, prefix_word_notice(session, n_fit))
    check_finite(result)
    return result


def reference_result(session: DecodeSession, reference: str, causal: bool = True, pad_to: int | None = None) -> Translation:
    """The teacher-forced "training view" of the session's source under ``reference``: one
    parallel pass (no decoding), with the reference log-probabilities, argmax and loss per step.

    Raises:
        InputError: the reference is empty after normalization.
    """
    tgt_tok, c = session.tgt_tok, session.model.config
    ref_ids = tgt_tok.encode(reference).ids
    if not ref_ids:
        raise InputError("the reference is empty after normalization")
    tgt_in, targets, ref_notice = reference_view(ref_ids, c.max_len, c.start_id, c.eos_id)
    tf = teacher_forced_pass(session, tgt_in, [BOS] + tgt_tok.ids_to_tokens(tgt_in[1:]), causal)
    stats = reference_stats(tf.logits, targets, c.pad_id if c.never_output_pad else None)
    probs = tf.logits.softmax(-1)
    top_p, top_i = probs.topk(min(session.top_k, probs.size(-1)), dim=-1)

    def name(t: int) -> str:
        return EOS if t == c.eos_id else tgt_tok.id_to_token(t)

    steps = [
        StepInfo(
            name(t),
            t,
            [(tgt_tok.id_to_token(int(i)), float(p)) for p, i in zip(top_p[k], top_i[k])],
            stats.ref_logprob[k],
            False,
            name(stats.argmax[k]),
            stats.running_loss[k],
            [int(i) for i in top_i[k]],
        )
        for k, t in enumerate(targets)
    ]
    with_texts(steps, tgt_tok)
    argmax_ids = []
    for t in stats.argmax:
        if t == c.eos_id:
            break
        argmax_ids.append(t)
    result = session_result(session, pad_to=pad_to)
    result.translation, result.steps, result.maps = tgt_tok.decode(argmax_ids), steps, tf.maps
    result.mode, result.reference, result.loss, result.causal = "teacher_forced", reference, stats.loss, causal
    result.logprob = sum(stats.ref_logprob)
    result.notice = _join(result.notice, ref_notice)
    return result


def _join(notice: str, more: str | None) -> str:
    if not more:
        return notice
    return f"{notice}; {more}" if notice else more


def reference_view(ref_ids: list[int], max_len: int, start_id: int, eos_id: int) -> tuple[list[int], list[int], str]:
    """Decoder input ``[T]`` (start token first), targets ``[T]`` and a notice for a reference of
    ``R = len(ref_ids)`` tokens, with ``T <= max_len`` decoder positions.

    Fits (R + 1 <= max_len): input ``[start] + ref``, targets ``ref + [EOS]``, no notice.
    Too long: input ``[start] + ref[:max_len - 1]``, targets ``ref[:max_len]`` (each position's
    real next reference token; no ``[EOS]``, since the reference does not end there), and a notice.
    """
    if len(ref_ids) + 1 <= max_len:
        return [start_id] + ref_ids, ref_ids + [eos_id], ""
    kept = max_len - 1
    notice = (
        f"reference has {len(ref_ids)} tokens; only the first {kept} were fed to the decoder "
        f"(max_len {max_len}), so the view ends before the reference does"
    )
    return [start_id] + ref_ids[:kept], ref_ids[:max_len], notice


def check_finite(result: Translation) -> None:
    """Raise InputError rather than let a NaN/inf reach a screen or a JSON file."""
    m = result.maps
    for name in ("encoder_self", "decoder_self", "cross"):
        if not bool(getattr(m, name).isfinite().all()):
            raise InputError(f"internal error: non-finite values in {name} attention")
    for s in result.steps:
        if any(not math.isfinite(p) for _, p in s.top_k):
            raise InputError("internal error: non-finite probabilities")


__all__ = [
    "translate",
    "Translation",
    "StepInfo",
    "prepare_source",
    "reference_view",
    "session_result",
    "reference_result",
    "replay",
    "prefix_ids",
    "with_texts",
]
