"""What a live toy-task run shows: the attention maps of a fixed probe pair (numpy, picklable),
greedy outputs, and the scores of one evaluation (used by core/training/live_session.py)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from core.training.alignment import ProbeBatch
from core.training.toy_tasks import ToyTask
from core.transformer.masks import causal_mask, key_padding_mask
from core.transformer.model import Transformer, captured


@dataclass(frozen=True)
class ProbeMaps:
    """Teacher-forced attention of one probe pair (its own lengths, no padding), float32 numpy.

    encoder_self: ``[L, H, S, S]``; decoder_self: ``[L, H, T, T]``; cross: ``[L, H, T, S]`` (rows
    are queries and sum to 1). ``src_tokens``: the S source tokens (characters, then [EOS]);
    ``tgt_tokens``: the T decoder inputs ([BOS], characters); row t predicts ``tgt_tokens[t + 1]``
    (the last row predicts [EOS]). ``decoder_self_mask``: ``[T, T]`` bool, **True = masked** (the
    causal mask; all False when the run trains without it). ``known_alignment``: ``[T, S]`` bool,
    True where row t should put its weight, or None for a task without one.
    """

    src_tokens: list[str]
    tgt_tokens: list[str]
    encoder_self: np.ndarray
    decoder_self: np.ndarray
    cross: np.ndarray
    decoder_self_mask: np.ndarray
    known_alignment: np.ndarray | None


@dataclass(frozen=True)
class Evaluation:
    """One evaluation of a live run. Losses in nats/token: ``train_loss`` the mean label-smoothed
    loss of the last updates, ``train_nll`` / ``heldout_nll`` the teacher-forced NLL on training
    pairs / the held-out probe set. ``accuracy``: share of probe pairs greedy decoding gets exactly
    right; ``char_accuracy``: share of reference characters right at their position.
    ``alignment``: the best head's agreement with the known alignment (0-1), ``best_head`` its
    (layer, head), 0-based; ``head_agreement``: ``[L, H]`` for every head; all three None for a
    task without a known alignment. ``outputs``: greedy outputs of the first 8 probe pairs;
    ``maps``: :class:`ProbeMaps` of probe pair 0."""

    updates: int
    train_loss: float
    train_nll: float
    heldout_nll: float
    accuracy: float
    char_accuracy: float
    alignment: float | None
    best_head: tuple[int, int] | None
    head_agreement: np.ndarray | None
    outputs: list[str]
    maps: ProbeMaps


@torch.no_grad()
def greedy_ids(model: Transformer, src: Tensor, max_len: int) -> list[list[int]]:
    """Greedy decoding of ``src [B, S]`` (always causal: each token from the ones before it), at
    most ``max_len`` tokens each (and at most the model's ``max_len`` positions); per row the ids
    after [BOS] up to and including the first [EOS]."""
    c = model.config
    enc = model.encode(src)
    ys = torch.full((src.size(0), 1), c.start_id, dtype=torch.long)
    done = torch.zeros(src.size(0), dtype=torch.bool)
    for _ in range(min(max_len, c.max_len - 1)):
        logits = model.decode(ys, enc.memory, enc.src_key_padding_mask).logits[:, -1]
        nxt = logits.argmax(-1).masked_fill(done, c.pad_id)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt.eq(c.eos_id)
        if bool(done.all()):
            break
    out = []
    for row in ys[:, 1:].tolist():
        out.append(row[: row.index(c.eos_id) + 1] if c.eos_id in row else row)
    return out


@torch.no_grad()
def probe_maps(model: Transformer, task: ToyTask, probe: ProbeBatch, causal: bool) -> tuple[ProbeMaps, list[Tensor]]:
    """One teacher-forced pass over the probe batch with the weights kept: the :class:`ProbeMaps`
    of probe pair 0 and, per decoder layer, the cross-attention of the whole batch ``[B, H, T, S]``."""
    pad = model.config.pad_id
    src, tgt_in = probe.src, probe.tgt[:, :-1]
    enc = model.encode(src, need_weights=True)
    tgt_kpm = key_padding_mask(tgt_in, pad)
    out = model.decode(tgt_in, enc.memory, enc.src_key_padding_mask, tgt_kpm, need_weights=True, causal=causal)
    s, t = int(src[0].ne(pad).sum()), int(tgt_in[0].ne(pad).sum())

    def first(ws: list[Tensor], rows: int, cols: int) -> np.ndarray:
        return torch.stack([w[0, :, :rows, :cols] for w in ws]).float().numpy().copy()

    mask = causal_mask(t).numpy() if causal else np.zeros((t, t), dtype=bool)
    known = probe.allowed[0, :t, :s].numpy().copy() if task.has_alignment else None
    maps = ProbeMaps(
        task.vocab.tokens(src[0, :s].tolist()),
        task.vocab.tokens(tgt_in[0, :t].tolist()),
        first(captured(enc.self_attn), s, s),
        first(captured(out.self_attn), t, t),
        first(captured(out.cross_attn), t, s),
        mask,
        known,
    )
    return maps, captured(out.cross_attn)
