"""One call from text to a full, displayable result: translation, per-step top-k and the
attention maps with their masks. Used by the CLI and the app alike."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from core.errors import InputError
from core.inference.beam import Hypothesis, beam_search
from core.inference.checkpoint import Checkpoint
from core.inference.decoding import DecodeSession, Source, prepare_source, teacher_forced
from core.inference.maps import AttentionMaps
from core.inference.tokenizer import BOS, EOS, _no_surrogates


@dataclass
class StepInfo:
    """Output token at one step and the top-k candidates ``[(token, probability)]``, highest first."""

    token: str
    token_id: int
    top_k: list[tuple[str, float]]


@dataclass
class Translation:
    """Everything the app shows for one sentence. ``mode``: greedy, beam or teacher_forced.
    ``maps`` rows are decoder inputs (BOS first); ``notice`` explains any truncation."""

    source: Source
    translation: str
    steps: list[StepInfo]
    maps: AttentionMaps
    mode: str
    beam: int = 1
    hypotheses: list[tuple[str, float, bool]] = field(default_factory=list)
    notice: str = ""
    reference: str | None = None

    def to_json(self) -> dict:
        """A JSON-ready dict (see ``python -m core translate --json``); masks True = masked."""
        m = self.maps
        return {
            "source": _no_surrogates(self.source.text),  # undecodable bytes as U+FFFD, valid UTF-8 out
            "translation": self.translation,
            "mode": self.mode,
            "beam": self.beam,
            "reference": self.reference,
            "notice": self.notice,
            "src_tokens": m.src_tokens,
            "tgt_tokens": m.tgt_tokens,
            "steps": [{"token": s.token, "id": s.token_id, "top_k": [[t, round(p, 6)] for t, p in s.top_k]}
                      for s in self.steps],
            "hypotheses": [{"text": t, "score": round(sc, 6), "truncated": tr} for t, sc, tr in self.hypotheses],
            "attention": m.to_json(),
            "masks": {
                "src_key_padding": m.src_key_padding_mask.tolist(),
                "tgt_key_padding": m.tgt_key_padding_mask.tolist(),
                "causal": m.causal_mask.tolist(),
            },
        }


def _session_steps(session: DecodeSession) -> list[StepInfo]:
    return [StepInfo(s.token, s.token_id, [(t, p) for t, _, p in s.top_k]) for s in session.steps]


def translate(ckpt: Checkpoint, text: str, beam: int = 1, pad_to: int | None = None, reference: str | None = None,
              top_k: int = 5, alpha: float = 0.6, should_stop=None) -> Translation:
    """Translate ``text``; with ``reference`` the maps come from one teacher-forced pass over it.

    Greedy (``beam == 1``) steps a :class:`DecodeSession`; beam search picks the best
    hypothesis, which is then replayed step by step so its maps and top-k are exactly those
    the cached decoder computes. ``should_stop()`` is polled between steps (cancellation).

    Raises:
        InputError: empty input, bad ``pad_to``/``beam``, or an empty reference.
    """
    if beam < 1:
        raise InputError("beam size must be at least 1")
    if top_k < 1:
        raise InputError("top-k must be at least 1")
    if beam > 64:
        raise InputError(f"beam size {beam} is too large (at most 64)")
    model, src_tok, tgt_tok = ckpt.model, ckpt.src_tokenizer, ckpt.tgt_tokenizer
    session = DecodeSession(model, src_tok, tgt_tok, text, pad_to=pad_to, top_k=top_k)
    hyps: list[Hypothesis] = []
    if beam == 1:
        while not session.finished:
            if should_stop is not None:
                should_stop()
            session.step()
    else:
        hyps = beam_search(model, src_tok, text, beam=beam, alpha=alpha, pad_to=pad_to, should_stop=should_stop)
        best = hyps[0]
        for tid in best.ids + ([] if best.truncated else [model.config.eos_id]):
            session.step(force=tid)
    result = Translation(
        session.source, session.translation, _session_steps(session), session.maps(),
        "greedy" if beam == 1 else "beam", beam,
        [(tgt_tok.decode(h.ids), h.score, h.truncated) for h in hyps],
        session.source.notice,
    )
    n_unk = session.source.tokens.count("[UNK]")
    if n_unk:
        result.notice = (result.notice + "; " if result.notice else "") + \
            f"{n_unk} character(s) unknown to the model are shown as [UNK]"
    if pad_to is not None and pad_to < session.source.n_real:
        result.notice = (result.notice + "; " if result.notice else "") + \
            f"pad-to {pad_to} is shorter than the {len(session.source.ids)} source positions: no padding added"
    if session.truncated:
        result.notice = (result.notice + "; " if result.notice else "") + "output stopped at the length limit"
    if reference is not None:
        ref_ids = tgt_tok.encode(reference).ids
        if not ref_ids:
            raise InputError("the reference is empty after normalization")
        c = model.config
        ref_ids = ref_ids[: c.max_len - 2]
        tgt_in = [c.bos_id] + ref_ids
        tf = teacher_forced(model, session.source.ids, tgt_in, session.source.tokens,
                            [BOS] + tgt_tok.ids_to_tokens(ref_ids))
        probs = tf.logits.softmax(-1)
        top_p, top_i = probs.topk(min(top_k, probs.size(-1)), dim=-1)
        targets = ref_ids + [c.eos_id]
        result.steps = [
            StepInfo(EOS if t == c.eos_id else tgt_tok.id_to_token(t), t,
                     [(tgt_tok.id_to_token(int(i)), float(p)) for p, i in zip(top_p[k], top_i[k])])
            for k, t in enumerate(targets)
        ]
        result.maps, result.mode, result.reference = tf.maps, "teacher_forced", reference
    check_finite(result)
    return result


def check_finite(result: Translation) -> None:
    """Raise InputError rather than let a NaN/inf reach a screen or a JSON file."""
    m = result.maps
    for name in ("encoder_self", "decoder_self", "cross"):
        if not bool(getattr(m, name).isfinite().all()):
            raise InputError(f"internal error: non-finite values in {name} attention")
    for s in result.steps:
        if any(not math.isfinite(p) for _, p in s.top_k):
            raise InputError("internal error: non-finite probabilities")


__all__ = ["translate", "Translation", "StepInfo", "prepare_source"]
