"""Label smoothing puts no mass on [PAD] (core/training/train.py ``loss_fn``): the loss equals
cross-entropy against an explicit target distribution whose [PAD] entry is exactly zero."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from core.training.train import loss_fn

PAD, V, EPS = 0, 11, 0.1


def batch():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(3, 5, V, generator=g)
    target = torch.randint(1, V, (3, 5), generator=g)
    target[0, 3:] = PAD
    target[2, 4] = PAD
    return logits, target


def explicit_distribution(target: torch.Tensor) -> torch.Tensor:
    """Annotated-Transformer style: ε spread over the V − 1 non-pad tokens, 1 − ε added on the
    reference token, [PAD] column zero. Rows ``[N, V]`` for the non-pad targets."""
    y = target[target.ne(PAD)]
    dist = torch.full((len(y), V), EPS / (V - 1))
    dist[:, PAD] = 0.0
    dist[torch.arange(len(y)), y] += 1.0 - EPS
    return dist


def test_loss_is_cross_entropy_against_a_distribution_without_pad():
    logits, target = batch()
    dist = explicit_distribution(target)
    assert torch.allclose(dist.sum(-1), torch.ones(len(dist))) and bool((dist[:, PAD] == 0).all())
    logp = logits[target.ne(PAD)].log_softmax(-1)
    want = -(dist * logp).sum(-1).mean()
    torch.testing.assert_close(loss_fn(logits, target, PAD, EPS), want)
    # torch's built-in smoothing gives [PAD] eps / V as well, so it is a different number
    builtin = F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD, label_smoothing=EPS)
    assert abs(float(builtin) - float(want)) > 1e-4


def test_gradient_pushes_pad_down_and_ignores_pad_targets():
    logits, target = batch()
    logits.requires_grad_(True)
    loss_fn(logits, target, PAD, EPS).backward()
    keep = target.ne(PAD)
    n = int(keep.sum())
    p_pad = logits.detach().softmax(-1)[..., PAD]
    # d loss / d z_pad = (p_pad - q_pad) / N with q_pad = 0: always >= 0, trains p([PAD]) towards 0
    torch.testing.assert_close(logits.grad[..., PAD][keep], p_pad[keep] / n)
    assert bool((logits.grad[~keep] == 0).all())


def test_no_smoothing_is_plain_cross_entropy():
    logits, target = batch()
    want = F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD)
    torch.testing.assert_close(loss_fn(logits, target, PAD, 0.0), want)
