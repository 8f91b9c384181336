"""Beam search with the GNMT length penalty (Wu et al. 2016, Eq. 14):
lp(Y) = ((5 + |Y|) / 6)^α, score(Y) = log P(Y | X) / lp(Y)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from core.inference.decoding import max_output_steps, prepare_source
from core.inference.tokenizer import TextTokenizer
from core.transformer.model import Transformer


def length_penalty(length: int, alpha: float) -> float:
    """GNMT lp(Y) for a hypothesis of ``length`` output tokens (EOS included)."""
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
    tgt_in = torch.tensor([[c.bos_id] + full[:-1]], device=device)
    with torch.inference_mode():
        logits = model(torch.tensor([src_ids], device=device), tgt_in)[0].float()
    lp = logits.log_softmax(-1).gather(1, torch.tensor(full, device=device)[:, None]).sum()
    return float(lp) / length_penalty(len(full), alpha)


def beam_search(model: Transformer, src_tok: TextTokenizer, text: str, beam: int = 4, alpha: float = 0.6,
                pad_to: int | None = None, n_best: int | None = None,
                should_stop=None, session=None, prefix: list[int] | None = None,
                trace: list[BeamStep] | None = None) -> list[Hypothesis]:
    """Beam search for one sentence; returns up to ``n_best`` (default ``beam``) distinct
    hypotheses, best first. Each ends with exactly one EOS or is marked ``truncated``.

    Shrinking beam: every hypothesis that ends with EOS leaves the beam and takes one of the
    k slots with it, so beam 1 is exactly greedy. Search stops when all slots have finished, or when no live
    hypothesis can beat the best finished one: since log-probabilities only fall and
    lp grows with length, a live hypothesis's best reachable score is logP / lp(max length).
    ``should_stop()`` (optional) is polled each step for cancellation; raising is the caller's job.

    ``session`` (a :class:`~core.inference.decoding.DecodeSession` of the same text): reuse its
    source and encoder output instead of encoding again. ``prefix``: output ids every hypothesis
    must start with (forced tokens; the beam holds one hypothesis until the prefix ends).
    ``trace``: a list that receives one :class:`BeamStep` per search step.

    Raises:
        InputError: the text is empty after normalization.
        ValueError: ``beam < 1``.
    """
    if beam < 1:
        raise ValueError("beam size must be >= 1")
    c = model.config
    device = next(model.parameters()).device
    source = session.source if session is not None else prepare_source(text, src_tok, c.max_len, c.eos_id,
                                                                         c.pad_id, pad_to)
    max_steps = max_output_steps(source.n_real, c.max_len)
    with torch.inference_mode():
        if session is not None:
            memory, kpm = session.memory, session.src_key_padding_mask
        else:
            enc = model.encode(torch.tensor([source.ids], device=device))
            memory, kpm = enc.memory, enc.src_key_padding_mask
        seqs: list[list[int]] = [[]]
        logps = torch.zeros(1, device=device)
        finished: list[Hypothesis] = []
        cache = None
        for t in range(max_steps):
            if should_stop is not None:
                should_stop()
            last = torch.tensor([[s[-1] if s else c.bos_id] for s in seqs], device=device)
            out = model.decode(last, memory.expand(len(seqs), -1, -1), kpm.expand(len(seqs), -1), cache=cache)
            cand = logps[:, None] + out.logits[:, -1].float().log_softmax(-1)  # [k, V]
            if prefix is not None and t < len(prefix):  # forced token: every other candidate is out
                keep = cand[:, prefix[t]].clone()
                cand.fill_(float("-inf"))
                cand[:, prefix[t]] = keep
            n_finished = len(finished)
            # Shrinking beam: the best `width` continuations; each EOS among them finishes a
            # hypothesis and takes its slot for good (so beam 1 is exactly greedy).
            width = beam - len(finished)  # slots not yet taken by a finished hypothesis
            flat_lp, flat_i = cand.flatten().topk(min(width, cand.numel()))
            v = cand.size(1)
            new_seqs, new_lp, parents = [], [], []
            for lp, i in zip(flat_lp.tolist(), flat_i.tolist()):
                if lp == float("-inf"):  # only excluded candidates are left
                    break
                parent, tok = divmod(i, v)
                if tok == c.eos_id:  # finished: leaves the beam, never extended
                    length = len(seqs[parent]) + 1
                    finished.append(Hypothesis(seqs[parent], lp, lp / length_penalty(length, alpha)))
                else:
                    new_seqs.append(seqs[parent] + [tok])
                    new_lp.append(lp)
                    parents.append(parent)
            if trace is not None:
                trace.append(BeamStep([Hypothesis(s, lp, lp / length_penalty(len(s), alpha))
                                       for s, lp in zip(new_seqs, new_lp)], finished[n_finished:]))
            if not new_seqs:  # every slot has finished
                break
            cache = [lc.select(torch.tensor(parents, device=device)) for lc in out.cache]
            seqs, logps = new_seqs, torch.tensor(new_lp, device=device)
            if finished:
                best_done = max(h.score for h in finished)
                best_live = max(new_lp) / length_penalty(max_steps, alpha)  # upper bound, see docstring
                if best_done >= best_live:
                    break
        else:  # output budget spent: live hypotheses end truncated
            for s, lp in zip(seqs, logps.tolist()):
                finished.append(Hypothesis(s, lp, lp / length_penalty(len(s), alpha), truncated=True))
    unique: dict[tuple, Hypothesis] = {}
    for h in sorted(finished, key=lambda h: -h.score):
        unique.setdefault((tuple(h.ids), h.truncated), h)
    return list(unique.values())[: n_best or beam]
