"""How well a model's cross-attention matches a known alignment: for every (layer, head), the
share of scored target positions whose attention row puts its largest weight (row argmax) on a
source position the target character comes from.

Row convention (as everywhere in the app): decoder input position ``t`` (``[BOS] y_0 … y_{n-1}``)
is the query that *predicts* ``y_t``, so row ``t`` is scored against ``y_t``'s source positions.
The row that predicts [EOS] and target characters with no source character are not scored.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from core.training.data import collate
from core.training.toy_tasks import Example, ToyTask


@dataclass
class ProbeBatch:
    """A padded batch of examples with their known alignment.

    src: ``[B, S]`` ids, characters then [EOS], then [PAD]; tgt: ``[B, T+1]`` ids, [BOS]
    characters [EOS] [PAD]… (decoder input ``tgt[:, :-1]``, prediction target ``tgt[:, 1:]``).
    allowed: ``[B, T, S]`` bool, True where row t may put its argmax (the source positions of
    ``y_t``); scored: ``[B, T]`` bool, True for the rows that count.
    """

    src: Tensor
    tgt: Tensor
    allowed: Tensor
    scored: Tensor


def encode_examples(task: ToyTask, examples: list[Example]) -> list[tuple[list[int], list[int]]]:
    """Token ids per example in the training format of :func:`core.training.data.encode_pairs`:
    source ``chars + [EOS]``, target ``[BOS] + chars + [EOS]``."""
    v = task.vocab
    return [(v.encode(e.src) + [2], [1] + v.encode(e.tgt) + [2]) for e in examples]


def probe_batch(task: ToyTask, examples: list[Example] | None = None) -> ProbeBatch:
    """The :class:`ProbeBatch` of ``examples`` (default: the task's probe set). Examples with no
    known alignment give rows that are all unscored."""
    examples = task.probe if examples is None else examples
    ids = encode_examples(task, examples)
    src, tgt = collate(ids, list(range(len(ids))), 0)
    b, s, t = src.size(0), src.size(1), tgt.size(1) - 1
    allowed = torch.zeros(b, t, s, dtype=torch.bool)
    for i, e in enumerate(examples):
        for row, positions in enumerate(e.alignment or ()):
            for p in positions:
                allowed[i, row, p] = True
    return ProbeBatch(src, tgt, allowed, allowed.any(-1))


def head_agreement(cross: list[Tensor], allowed: Tensor, scored: Tensor) -> Tensor:
    """Per head, the share of scored rows whose argmax is an allowed source position.

    Args:
        cross: per decoder layer the cross-attention weights ``[B, H, T, S]`` (rows sum to 1 over
            the unmasked source positions; masked [PAD] columns hold exactly 0).
        allowed: ``[B, T, S]`` bool; scored: ``[B, T]`` bool (see :class:`ProbeBatch`).
    Returns:
        ``[L, H]`` float agreement in [0, 1].
    Raises:
        ValueError: no row is scored (nothing to compare with).
    """
    n = int(scored.sum())
    if n == 0:
        raise ValueError("no target position has a known alignment")
    w = torch.stack([c.detach().float().cpu() for c in cross])  # [L, B, H, T, S]
    hit = allowed[None, :, None].expand(*w.shape).gather(-1, w.argmax(-1, keepdim=True)).squeeze(-1)  # [L, B, H, T]
    return (hit & scored[None, :, None]).sum(dim=(1, 3)).float() / n


def best_head(agreement: Tensor) -> tuple[int, int, float]:
    """(layer, head, agreement) of the head with the highest agreement in ``[L, H]`` (0-based;
    the first one on a tie)."""
    flat = int(agreement.flatten().argmax())
    layer, head = divmod(flat, agreement.size(1))
    return layer, head, float(agreement[layer, head])
