"""The inside of one attention step (paper Eq. 1) on the model's real tensors, for one head and
one query: q, the keys, the scores q·k/√d_k, the mask given (True = masked), the softmax weights
(the very row the attention map shows) and the weighted sum of V (the head's output before W^O).

Also the positional-encoding matrix the model adds to its embeddings (§3.5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from core.checkpoints.checkpoint import Checkpoint
from core.decoding.session import DecodeSession
from core.decoding.translate import Translation, translate
from core.errors import InputError
from core.transformer.ablation import KINDS, attention_module


@dataclass
class InsideStep:
    """One head, one query. kind: enc/dec/cross; layer, head, query: 1-based.

    q ``[d_head]``; k, v ``[K, d_head]`` (K = keys that existed: during cached decoding the
    decoder's self-attention has only the keys up to the query); scores ``[K]`` = q·k/√d_head;
    mask ``[K]`` bool (True = masked) or None when the model was given no mask; masked_scores
    ``[K]``: the scores with −inf where masked; weights ``[K]``: softmax of masked_scores as the
    model computed it, **equal to the attention map's row** (first K columns); output ``[d_head]``:
    Σ_k weights_k v_k, the head's output before W^O. key_tokens / query_token label them.
    """

    kind: str
    layer: int
    head: int
    query: int
    query_token: str
    key_tokens: list[str]
    q: Tensor
    k: Tensor
    v: Tensor
    scores: Tensor
    mask: Tensor | None
    masked_scores: Tensor
    weights: Tensor
    output: Tensor

    def to_json(self) -> dict:
        """Nested lists rounded to 6 decimals; −inf (masked) scores are ``null`` in masked_scores."""

        def r(x: Tensor) -> list:
            return torch.round(x.double(), decimals=6).tolist()

        return {
            "kind": self.kind,
            "layer": self.layer,
            "head": self.head,
            "query": self.query,
            "query_token": self.query_token,
            "key_tokens": self.key_tokens,
            "d_head": int(self.q.numel()),
            "q": r(self.q),
            "k": r(self.k),
            "v": r(self.v),
            "scores": r(self.scores),
            "mask": None if self.mask is None else self.mask.tolist(),
            "masked_scores": [None if math.isinf(s) else round(s, 6) for s in self.masked_scores.tolist()],
            "weights": r(self.weights),
            "output": r(self.output),
        }


def _check_head(ckpt: Checkpoint, kind: str, layer: int, head: int) -> None:
    """Raise InputError unless kind is enc/dec/cross and layer/head (1-based) exist in the model."""
    if kind not in KINDS:
        raise InputError(f"unknown attention kind {kind!r}; expected one of {', '.join(KINDS)}")
    c = ckpt.model.config
    n_layers = c.n_encoder_layers if kind == "enc" else c.n_decoder_layers
    if not 1 <= layer <= n_layers:
        raise InputError(f"--inside layer {layer} out of range 1..{n_layers} ({kind})")
    if not 1 <= head <= c.n_heads:
        raise InputError(f"--inside head {head} out of range 1..{c.n_heads}")


def inside_step(
    ckpt: Checkpoint, text: str, kind: str, layer: int, head: int, query: int, **options
) -> tuple[InsideStep, Translation]:
    """Translate ``text`` (greedy or beam; ``options`` as for :func:`translate`, no reference),
    then replay the output on a fresh KV-cache session while recording the chosen attention
    module's projected q, k, v and weights (:attr:`MultiHeadAttention.record`), and return the
    step of head ``head`` for query ``query`` of ``layer`` (all 1-based) with the translation.

    Raises:
        InputError: unknown kind, layer/head/query out of range, a reference given, or the
            recorded row differing from the map's row (an internal error).
    """
    _check_head(ckpt, kind, layer, head)
    if options.get("reference") is not None:
        raise InputError("--inside works on decoded output, not on a teacher-forced reference")
    result = translate(ckpt, text, **options)
    return inside_of_result(ckpt, result, kind, layer, head, query), result


def inside_of_result(ckpt: Checkpoint, result: Translation, kind: str, layer: int, head: int, query: int) -> InsideStep:
    """The inside of one step of a result already decoded (greedy or beam, forced tokens
    included, e.g. the app's live session at its current step): its output tokens
    ``result.steps[:query]`` are replayed on a fresh KV-cache session of ``result.source`` (same
    padding) while recording; the weights are checked **equal** to ``result.maps``' row.
    kind enc/dec/cross; layer, head, query 1-based (query ≤ the queries in ``result.maps``).

    Raises:
        InputError: a teacher-forced result, unknown kind, layer/head/query out of range, or the
            recorded row differing from the map's row (e.g. a padded-batch result).
    """
    _check_head(ckpt, kind, layer, head)
    if result.mode not in ("greedy", "beam"):
        raise InputError(f"the inside view works on decoded output (greedy or beam), not on {result.mode} results")
    maps = result.maps
    full = {"enc": maps.encoder_self, "dec": maps.decoder_self, "cross": maps.cross}[kind]
    if not 1 <= query <= full.shape[-2]:
        raise InputError(f"--inside query {query} out of range 1..{full.shape[-2]} ({kind} has {full.shape[-2]} queries)")
    if kind != "enc" and query > len(result.steps):
        raise InputError(f"query {query} is past the {len(result.steps)} decoded steps (a padded batch row?)")
    t0 = query - 1
    src = result.source
    pad_to = len(src.ids) if len(src.ids) > src.n_real else None
    mha = attention_module(ckpt.model, kind, layer - 1)
    mha.record = []
    try:
        s = DecodeSession(ckpt.model, ckpt.src_tokenizer, ckpt.tgt_tokenizer, src.text, pad_to=pad_to)
        if kind != "enc":
            for st in result.steps[:query]:
                s.step(force=st.token_id)
        rec = mha.record[0] if kind == "enc" else mha.record[t0]
    finally:
        mha.__dict__.pop("record", None)
    row = t0 if kind == "enc" else 0
    h = head - 1
    q, k, v = rec["q"][0, h, row].float().cpu(), rec["k"][0, h].float().cpu(), rec["v"][0, h].float().cpu()
    scores = (q @ k.T) / math.sqrt(q.numel())
    mask = None
    if rec["mask"] is not None:
        m = rec["mask"]
        mask = m.expand(m.shape[0], m.shape[1], rec["q"].shape[2], k.shape[0])[0, min(h, m.shape[1] - 1), row].cpu()
    masked = scores if mask is None else scores.masked_fill(mask, float("-inf"))
    weights = rec["weights"][0, h, row].float().cpu()
    if not torch.equal(weights, full[layer - 1, h, t0, : weights.numel()]):
        raise InputError("internal error: the recorded attention row differs from the map's row")
    keys = maps.src_tokens if kind != "dec" else maps.tgt_tokens
    queries = maps.src_tokens if kind == "enc" else maps.tgt_tokens
    return InsideStep(
        kind,
        layer,
        head,
        query,
        queries[t0],
        list(keys[: k.shape[0]]),
        q,
        k,
        v,
        scores,
        mask,
        masked,
        weights,
        rec["heads"][0, h, row].float().cpu(),
    )


def positional_matrix(model, side: str = "src", n: int | None = None) -> Tensor:
    """The positional encodings the model adds (§3.5): ``[n, d_model]`` float32 rows for positions
    0..n-1 (all ``max_len`` when n is None); sinusoidal (either layout) or the learned table.

    Raises:
        ValueError: side not "src"/"tgt", or n outside 1..max_len.
    """
    if side not in ("src", "tgt"):
        raise ValueError(f"side must be 'src' or 'tgt', not {side!r}")
    pos = model.src_pos if side == "src" else model.tgt_pos
    table = pos.table.weight if pos.kind == "learned" else pos.pe
    n = pos.max_len if n is None else n
    if not 1 <= n <= pos.max_len:
        raise ValueError(f"n = {n} outside 1..{pos.max_len} (max_len)")
    return table[:n].detach().float().cpu().clone()


__all__ = ["inside_step", "inside_of_result", "InsideStep", "positional_matrix"]
