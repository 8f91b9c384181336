"""Beam search with the GNMT length penalty (Wu et al. 2016, Eq. 14):
lp(Y) = ((5 + |Y|) / 6)^α, score(Y) = log P(Y | X) / lp(Y).

The search follows fairseq's ``BeamSearch`` / Hugging Face's ``BeamSearchScorer``: the live beam
always holds k unfinished hypotheses, finished ones are kept aside, and each step looks at the top
2k candidates so that k of them can continue even when up to k of them end with EOS.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from core.decoding.session import output_budget, prepare_source
from core.defaults import check_beam
from core.errors import InputError
from core.tokenizers.protocol import SubwordTokenizer
from core.transformer.model import Transformer


def length_penalty(length: int, alpha: float) -> float:
    """GNMT lp(Y) for a hypothesis of ``length`` output tokens (EOS included); unitless, 1 at length 1."""
    return ((5.0 + length) / 6.0) ** alpha


@dataclass
class Hypothesis:
    """Output ids (EOS excluded), total log-probability (nats), GNMT score, truncated flag
    (True = ran out of output budget without EOS)."""

    ids: list[int]
    logprob: float
    score: float
    truncated: bool = False


@dataclass
class BeamStep:
    """The beam after search step t (for the hypotheses view): ``live`` hypotheses in beam order
    (score = log P / lp(|Y|) as if they ended here) and those that ``finished`` at t with EOS."""

    live: list[Hypothesis]
    finished: list[Hypothesis]


def sequence_score(model: Transformer, src_ids: list[int], out_ids: list[int], alpha: float, eos: bool = True) -> float:
    """GNMT score of a given output (``out_ids`` without EOS; EOS appended when ``eos``), by one
    teacher-forced pass. Used to compare greedy and beam under the same length penalty."""
    c = model.config
    device = next(model.parameters()).device
    full = out_ids + ([c.eos_id] if eos else [])
    tgt_in = torch.tensor([[_start_id(c)] + full[:-1]], device=device)
    with torch.inference_mode():
        logits = model(torch.tensor([src_ids], device=device), tgt_in)[0].float()
    lp = logits.log_softmax(-1).gather(1, torch.tensor(full, device=device)[:, None]).sum()
    return float(lp) / length_penalty(len(full), alpha)


def encoded_source(model: Transformer, src_tok: SubwordTokenizer, text: str, session=None, pad_to: int | None = None):
    """``(source, memory [1, S, d_model], src_key_padding_mask [1, S])`` for a search: the
    session's own (no second encode) when ``session`` is given, else ``text`` tokenized and
    encoded once. Raises InputError for an empty text (see :func:`prepare_source`)."""
    if session is not None:
        return session.source, session.memory, session.src_key_padding_mask
    c = model.config
    source = prepare_source(text, src_tok, c.max_len, c.eos_id, c.pad_id, pad_to)
    with torch.inference_mode():
        enc = model.encode(torch.tensor([source.ids], device=next(model.parameters()).device))
    return source, enc.memory, enc.src_key_padding_mask


def _start_id(config) -> int:
    """The first decoder input (``config.start_id`` where the config has one, else ``bos_id``)."""
    return getattr(config, "start_id", config.bos_id)


def top_candidates(scores: Tensor, n: int) -> list[tuple[float, int]]:
    """The ``n`` best entries of ``scores [k, V]`` as ``(score, flat index)``, best first.

    Deterministic: equal scores are ordered by flat index (earlier beam row first, then lower
    token id), also at the cut-off, where ``torch.topk`` alone may pick either of two equals.
    """
    flat = scores.flatten()
    n = min(n, flat.numel())
    threshold = flat.topk(n).values[-1]
    idx = (flat >= threshold).nonzero().flatten()  # ascending flat index
    vals = flat[idx]
    order = vals.sort(descending=True, stable=True).indices[:n]
    return list(zip(vals[order].tolist(), idx[order].tolist()))


def beam_search(
    model: Transformer,
    src_tok: SubwordTokenizer,
    text: str,
    beam: int = 4,
    alpha: float = 0.6,
    pad_to: int | None = None,
    n_best: int | None = None,
    should_stop=None,
    session=None,
    prefix: list[int] | None = None,
    trace: list[BeamStep] | None = None,
    keep_greedy: bool = True,
) -> list[Hypothesis]:
    """Beam search for one sentence; returns up to ``n_best`` (default ``beam``) distinct
    hypotheses, best score first. Each ends with exactly one EOS or is marked ``truncated``
    (the output budget ran out; scored without EOS, competing by score as Hugging Face's
    finalization at the maximum length does).

    Each step scores every continuation of the k live hypotheses (log P so far + log p(y_t), nats)
    and takes the top 2k. A candidate that is EOS and ranks in the top k finishes a hypothesis
    (scored log P / lp(|Y|)); it leaves the live beam and does not take one of its k slots, which
    are refilled from the next-best non-EOS candidates (there are at least k among 2k: each live
    hypothesis has one EOS candidate). Beam 1 is greedy decoding: one candidate, the argmax.

    Stopping rule (exact under the length penalty): log-probabilities only fall, so a live
    hypothesis with log P_t ≤ 0 can at best finish with log P_t / max(lp(t + 1), lp(T_max))
    (T_max = the output budget, EOS included). Search stops once ``n_best`` hypotheses have
    finished and the ``n_best``-th best score is at least that bound for every live hypothesis,
    so the returned hypotheses are exactly the best finished ones the beam can reach.

    Beam search prunes: the greedy path can fall out of the top k (on the shipped model it does
    for some sentences at beam 2). With ``keep_greedy`` (default) the greedy hypothesis (one
    extra single-row search, about 1/k of the cost) competes with the beam's, so the result never
    scores below greedy under the search's own objective; ``keep_greedy=False`` is the plain search.

    Ties are broken deterministically: equal candidates by beam row then token id (see
    :func:`top_candidates`), equal final scores by the order they finished.
    ``should_stop()`` (optional) is polled each step for cancellation; raising is the caller's job.

    ``session`` (a :class:`~core.decoding.session.DecodeSession` of the same text): reuse its
    source and encoder output instead of encoding again. ``prefix``: output ids every hypothesis
    must start with (forced tokens; the beam holds one hypothesis until the prefix ends). The
    output budget counts after the prefix (see :func:`~core.decoding.session.output_budget`), so
    a hypothesis may be as long as the prefix plus the budget a search without one has.
    ``trace``: a list that receives one :class:`BeamStep` per search step.

    Raises:
        InputError: the text is empty after normalization, or ``beam`` / ``n_best`` is out of range
            (see :data:`core.defaults.MAX_BEAM`).
    """
    check_beam(beam)
    n_best = beam if n_best is None else n_best
    if not 1 <= n_best <= beam:
        raise InputError(f"n_best must be between 1 and the beam size {beam} (got {n_best})")
    c = model.config
    device = next(model.parameters()).device
    source, memory, kpm = encoded_source(model, src_tok, text, session, pad_to)
    max_steps = output_budget(source.n_real, c.max_len, len(prefix or []))  # counted after the prefix
    n_cand = 1 if beam == 1 else 2 * beam
    finished: list[Hypothesis] = []
    truncated: list[Hypothesis] = []
    with torch.inference_mode():
        seqs: list[list[int]] = [[]]
        logps = torch.zeros(1, device=device)
        cache = None
        for t in range(max_steps):
            if should_stop is not None:
                should_stop()
            last = torch.tensor([[s[-1] if s else _start_id(c)] for s in seqs], device=device)
            out = model.decode(last, memory.expand(len(seqs), -1, -1), kpm.expand(len(seqs), -1), cache=cache)
            cand = logps[:, None] + out.logits[:, -1].float().log_softmax(-1)  # [k, V]
            if getattr(c, "never_output_pad", False):  # pad is never an output token
                cand[:, c.pad_id] = float("-inf")
            if prefix is not None and t < len(prefix):  # forced token: every other candidate is out
                keep = cand[:, prefix[t]].clone()
                cand.fill_(float("-inf"))
                cand[:, prefix[t]] = keep
            v = cand.size(1)
            n_finished = len(finished)
            new_seqs: list[list[int]] = []
            new_lp: list[float] = []
            parents: list[int] = []
            for rank, (lp, i) in enumerate(top_candidates(cand, n_cand)):
                if lp == float("-inf"):  # only excluded candidates are left
                    break
                parent, tok = divmod(i, v)
                if tok == c.eos_id:
                    if rank < beam:  # as fairseq/HF: only an EOS among the top k finishes
                        length = len(seqs[parent]) + 1
                        finished.append(Hypothesis(seqs[parent], lp, lp / length_penalty(length, alpha)))
                elif len(new_seqs) < beam:
                    new_seqs.append(seqs[parent] + [tok])
                    new_lp.append(lp)
                    parents.append(parent)
            if trace is not None:
                trace.append(
                    BeamStep(
                        [Hypothesis(s, lp, lp / length_penalty(len(s), alpha)) for s, lp in zip(new_seqs, new_lp)],
                        finished[n_finished:],
                    )
                )
            if not new_seqs:  # greedy ended with EOS (or a degenerate vocabulary)
                break
            seqs, logps = new_seqs, torch.tensor(new_lp, device=device)
            if t + 1 >= max_steps:  # output budget spent: live hypotheses end truncated
                truncated = [Hypothesis(s, lp, lp / length_penalty(len(s), alpha), truncated=True) for s, lp in zip(seqs, new_lp)]
                break
            cache = [lc.select(torch.tensor(parents, device=device)) for lc in out.cache]
            if len(finished) >= n_best:
                kth = sorted((h.score for h in finished), reverse=True)[n_best - 1]
                best_lp_now = max(new_lp)  # live length is t + 1; it can end at t + 2 .. max_steps
                bound = best_lp_now / max(length_penalty(t + 2, alpha), length_penalty(max_steps, alpha))
                if kth >= bound:
                    break
    if keep_greedy and beam > 1:
        finished += beam_search(model, src_tok, text, 1, alpha, pad_to, should_stop=should_stop, session=session, prefix=prefix)
    ranked = sorted(finished + truncated, key=lambda h: -h.score)  # stable: ties keep finishing order
    unique: dict[tuple, Hypothesis] = {}
    for h in ranked:
        unique.setdefault((tuple(h.ids), h.truncated), h)
    return list(unique.values())[:n_best]
