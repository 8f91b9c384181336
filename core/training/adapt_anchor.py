"""What keeps a model adapted to a few pairs close to the model it came from: low-rank adapters
(only a small update of chosen matrices is learned), training only some parameters, a distillation
term to the base model's output distribution on the replay pairs, and a check that stops adapting
as soon as every pair comes out right. Used by :func:`core.training.adapt.adapt`; Qt-free.

Low-rank adapters (Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language Models"): a chosen
``nn.Linear``'s weight ``W [out, in]`` is computed as ``W + (B A)·s`` with ``A [r, in]`` drawn at
random, ``B [out, r]`` zero and ``s = alpha / r``, through :mod:`torch.nn.utils.parametrize`;
every other parameter is frozen. ``B`` starts at zero, so the model computes what the base does
until the first update; :func:`merge_low_rank` folds ``W + (B A)·s`` back into a plain weight, so
the saved model is in the usual checkpoint format.
"""

from __future__ import annotations

import fnmatch
import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.utils import parametrize

from core.evaluation.words import word_distance
from core.training.step import StepResult, apply_update, loss_fn, set_learning_rate
from core.transformer.model import Transformer


class LowRankDelta(nn.Module):
    """The parametrization ``W ↦ W + (B A)·scale`` of one ``nn.Linear`` weight ``W [out, in]``:
    ``a`` is ``A [rank, in]`` (Kaiming-uniform, as ``nn.Linear`` initializes, from ``generator``),
    ``b`` is ``B [out, rank]`` (zeros), ``scale = alpha / rank``."""

    def __init__(self, out_features: int, in_features: int, rank: int, alpha: float, generator: torch.Generator) -> None:
        super().__init__()
        if rank < 1:
            raise ValueError(f"rank must be >= 1, got {rank}")
        self.a = nn.Parameter(torch.empty(rank, in_features))
        nn.init.kaiming_uniform_(self.a, a=math.sqrt(5), generator=generator)
        self.b = nn.Parameter(torch.zeros(out_features, rank))
        self.scale = alpha / rank

    def forward(self, weight: Tensor) -> Tensor:
        return weight + (self.b @ self.a) * self.scale


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def add_low_rank(
    model: nn.Module, rank: int, patterns: tuple[str, ...], alpha: float | None = None, seed: int = 0
) -> list[nn.Parameter]:
    """Freeze every parameter of ``model`` and give each ``nn.Linear`` whose module name matches one
    of the glob ``patterns`` (e.g. ``"decoder_layers.*"``; ``fnmatch``, ``*`` also crosses dots) a
    :class:`LowRankDelta` of ``rank`` (``alpha`` default ``rank``: scale 1). Returns the adapter
    parameters (the only ones that train).

    Raises:
        ValueError: no ``nn.Linear`` matches, or ``rank`` < 1.
    """
    gen = torch.Generator().manual_seed(seed)
    targets = [(n, m) for n, m in model.named_modules() if isinstance(m, nn.Linear) and _matches(n, patterns)]
    if not targets:
        raise ValueError(f"no linear layer matches {', '.join(patterns)}")
    for p in model.parameters():
        p.requires_grad_(False)
    params: list[nn.Parameter] = []
    for _, m in targets:
        delta = LowRankDelta(m.out_features, m.in_features, rank, float(alpha or rank), gen)
        parametrize.register_parametrization(m, "weight", delta)
        params += [delta.a, delta.b]
    return params


def merge_low_rank(model: nn.Module) -> int:
    """Replace every parametrized weight by its value ``W + (B A)·scale`` as a plain parameter
    (the adapters are dropped). Returns how many weights were merged."""
    merged = 0
    for m in model.modules():
        if parametrize.is_parametrized(m, "weight"):
            parametrize.remove_parametrizations(m, "weight", leave_parametrized=True)
            merged += 1
    return merged


def train_only(model: nn.Module, patterns: tuple[str, ...]) -> int:
    """Freeze every parameter whose name matches none of the glob ``patterns`` (e.g.
    ``"decoder_layers.3.*"``). Returns the number of values left to train.

    Raises:
        ValueError: nothing matches.
    """
    n = 0
    for name, p in model.named_parameters():
        keep = _matches(name, patterns)
        p.requires_grad_(keep)
        n += p.numel() if keep else 0
    if not n:
        raise ValueError(f"no parameter matches {', '.join(patterns)}")
    return n


def distill_loss(student: Tensor, teacher: Tensor, target: Tensor, pad_id: int) -> Tensor:
    """Token-mean KL(p_teacher ‖ p_student) of logits ``student``, ``teacher [B, T, V]`` over the
    positions whose ``target [B, T]`` is not ``pad_id``; a scalar in nats/token (0 when the two
    distributions are equal)."""
    keep = target.ne(pad_id).reshape(-1)
    s = student.reshape(-1, student.size(-1))[keep].float().log_softmax(-1)
    t = teacher.reshape(-1, teacher.size(-1))[keep].float().log_softmax(-1)
    return F.kl_div(s, t, log_target=True, reduction="batchmean")


def distill_step(
    model: Transformer,
    teacher: Transformer,
    opt: torch.optim.Optimizer,
    mine: tuple[Tensor, Tensor],
    replay: tuple[Tensor, Tensor],
    lr: float,
    weight: float = 1.0,
    label_smoothing: float = 0.1,
    clip: float = 1.0,
) -> StepResult:
    """One update on the user's pairs ``mine`` (label-smoothed cross-entropy, as
    :func:`core.training.step.train_step`) plus ``weight`` × :func:`distill_loss` to the frozen
    ``teacher`` (the base model, eval mode) on the ``replay`` pairs, teacher-forced on the same
    target prefix. ``mine`` and ``replay`` are ``(src [B, S], tgt [B, T+1])`` batches as
    :func:`core.training.data.collate` makes them. ``loss`` in the result is the sum (nats/token)."""
    set_learning_rate(opt, lr)
    pad = model.config.pad_id
    src, tgt = mine
    loss = loss_fn(model(src, tgt[:, :-1]), tgt[:, 1:], pad, label_smoothing)
    r_src, r_tgt = replay
    with torch.no_grad():
        t_logits = teacher(r_src, r_tgt[:, :-1])
    loss = loss + weight * distill_loss(model(r_src, r_tgt[:, :-1]), t_logits, r_tgt[:, 1:], pad)
    norm = apply_update(model, opt, loss, clip)
    return StepResult(float(loss.detach()), int(tgt[:, 1:].ne(pad).sum()), lr, norm)


def pairs_learned(ckpt, pairs: list[tuple[str, str]], max_words: int = 1) -> int:
    """How many ``pairs`` the model of ``ckpt`` translates (greedy) within ``max_words`` words of
    the reference (:func:`core.evaluation.words.word_distance`). Puts the model in eval mode for
    the translation and back in the mode it was in after."""
    from core.decoding.text_batch import translate_texts

    model = ckpt.model
    was_training = model.training
    model.eval()
    try:
        with parametrize.cached():
            out = translate_texts(ckpt, [ko for ko, _ in pairs])
    finally:
        model.train(was_training)
    return sum(word_distance(r.translation, en) <= max_words for r, (_, en) in zip(out, pairs))
