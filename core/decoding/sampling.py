"""Sampling: each output token drawn from the model's distribution, reshaped by a temperature and
cut to the most probable tokens (top-k, Fan et al. 2018; nucleus / top-p, Holtzman et al. 2020,
"The Curious Case of Neural Text Degeneration", §3.1), with a seed so a draw can be repeated.

:func:`shaped_distribution` is the distribution a step draws from, also what the app shows beside
the model's own (before and after temperature and the cut). :func:`sample_search` draws one whole
output ahead of time; the session then steps through it (as for beam search), so every map and
top-k on screen is the model's own at the drawn tokens.
"""

from __future__ import annotations

import torch
from torch import Tensor

from core.decoding.beam import Hypothesis, encoded_source, length_penalty
from core.decoding.session import output_budget


def shaped_distribution(logits: Tensor, temperature: float, top_k: int = 0, top_p: float = 1.0) -> Tensor:
    """The probabilities ``[V]`` a sampling step draws from: ``softmax(logits / temperature)``,
    then only the ``top_k`` most probable tokens kept (0 = all), then only the smallest set of the
    most probable whose mass reaches ``top_p`` (1 = all), renormalised to sum to 1. Tokens cut
    have probability exactly 0. Temperature 0 is the argmax: probability 1 on it (ties: the lower
    id), the limit of temperature → 0.

    Raises:
        ValueError: temperature < 0, top_k < 0, or top_p outside (0, 1].
    """
    check_sampling(temperature, top_k, top_p)
    logits = logits.float()
    if temperature == 0:
        out = torch.zeros_like(logits)
        out[int(logits.argmax())] = 1.0
        return out
    probs = (logits / temperature).softmax(-1)
    order = probs.argsort(descending=True, stable=True)
    keep = torch.ones_like(probs, dtype=torch.bool)
    if top_k:
        keep[order[top_k:]] = False
    if top_p < 1.0:
        sorted_p = probs[order]
        before = sorted_p.cumsum(0) - sorted_p  # mass of the more probable tokens before each
        keep[order[before >= top_p]] = False  # the token that crosses top_p is kept
    probs = torch.where(keep, probs, torch.zeros_like(probs))
    return probs / probs.sum()


def check_sampling(temperature: float, top_k: int, top_p: float) -> None:
    """Raise ValueError naming the first sampling setting out of range."""
    if not temperature >= 0:  # also NaN
        raise ValueError(f"temperature must be at least 0 (0 = greedy), got {temperature}")
    if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 0:
        raise ValueError(f"top-k must be a whole number of tokens, at least 0 (0 = no cut), got {top_k}")
    if not 0 < top_p <= 1:
        raise ValueError(f"top-p must be in (0, 1] (1 = no cut), got {top_p}")


def sample_search(
    strategy,
    model,
    src_tok,
    text: str,
    *,
    alpha: float = 0.6,
    should_stop=None,
    session=None,
    prefix: list[int] | None = None,
    trace=None,
) -> list[Hypothesis]:
    """One output drawn token by token from :func:`shaped_distribution` of each step's logits
    (``strategy``'s temperature, top-k, top-p), with a ``torch.Generator`` seeded by
    ``strategy.seed``: the same seed, text and model give the same output. ``prefix`` ids are taken
    as they are, then the draw continues; it ends at EOS or when the output budget is spent
    (truncated). Returns ``[Hypothesis]``: log P is the model's own (temperature 1, no cut), the
    score log P / lp(|Y|) as beam search scores. ``trace`` is not used (nothing is pruned)."""
    c = model.config
    device = next(model.parameters()).device
    gen = torch.Generator(device="cpu").manual_seed(strategy.seed)
    source, memory, kpm = encoded_source(model, src_tok, text, session)
    max_steps = output_budget(source.n_real, c.max_len, len(prefix or []))
    ids: list[int] = []
    logp = 0.0
    with torch.inference_mode():
        cache = None
        start = getattr(c, "start_id", c.bos_id)
        for t in range(max_steps):
            if should_stop is not None:
                should_stop()
            last = torch.tensor([[ids[-1] if ids else start]], device=device)
            out = model.decode(last, memory, kpm, cache=cache)
            cache = out.cache
            logits = out.logits[0, -1].float().cpu()
            if getattr(c, "never_output_pad", False):
                logits[c.pad_id] = float("-inf")
            if prefix is not None and t < len(prefix):
                tok = prefix[t]
            else:
                p = shaped_distribution(logits, strategy.temperature, strategy.sample_top_k, strategy.top_p)
                tok = int(torch.multinomial(p, 1, generator=gen))
            logp += float(logits.log_softmax(-1)[tok])
            if tok == c.eos_id:
                return [Hypothesis(ids, logp, logp / length_penalty(len(ids) + 1, alpha))]
            ids.append(tok)
    return [Hypothesis(ids, logp, logp / length_penalty(len(ids), alpha), truncated=True)]


__all__ = ["check_sampling", "sample_search", "shaped_distribution"]
