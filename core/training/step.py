"""One training update, shared by every trainer in the project: ``python -m core train``
(core/training/train.py), the live toy-task session (core/training/live_session.py) and
adapting a checkpoint to a few pairs (core/training/adapt.py).

The pieces are the paper's (§5): Adam with β = (0.9, 0.98), ε = 1e-9 (§5.3); the warm-up and
inverse-square-root learning rate (Eq. 3, :mod:`core.training.schedule`); label-smoothed
cross-entropy on the logits (§5.4, :func:`loss_fn`); then gradient-norm clipping, which the paper
does not use and every trainer here does.

Typical use (one process)::

    opt = make_optimizer(model)
    sched = Schedule(d_model=cfg.d_model, warmup=400, lr_scale=1.0, max_steps=2000)
    for step, (src, tgt) in enumerate(batches, start=1):
        result = train_step(model, opt, src, tgt, sched.rate(step), label_smoothing=0.1, clip=1.0)
        print(result.loss, result.tokens)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from core.training.schedule import learning_rate
from core.transformer.masks import key_padding_mask
from core.transformer.model import Transformer

ADAM_BETAS = (0.9, 0.98)  # paper §5.3
ADAM_EPS = 1e-9


def loss_fn(logits: Tensor, target: Tensor, pad_id: int, smoothing: float) -> Tensor:
    """Token-mean cross-entropy on raw logits ``[B, T, V]`` vs ``target [B, T]``, with label
    smoothing ε (paper §5.4); positions whose target is ``pad_id`` are ignored. Returns a scalar (nats).

    Log-softmax is applied here: logits must not be softmaxed before.

    Smoothing never puts mass on [PAD]: the target distribution is (1 − ε) on the reference token
    plus ε / (V − 1) on every token except ``pad_id``, whose share is exactly 0 (as the Annotated
    Transformer does; ``F.cross_entropy(label_smoothing=ε)`` would give [PAD] ε / V too). [PAD] is
    never a correct output, so no probability should be trained onto it. Measured on the shipped
    ko-en-base (trained with the old uniform ε / V = 2.5e-5 on [PAD], ε 0.1, V 4000) over the 30
    fixture pairs (248 target tokens): mean p([PAD]) 8.2e-6, and the two losses differ by 1.2e-5
    nats/token, so the choice is about the objective being right, not about measurable quality.
    With ε = 0 this is plain cross-entropy (``evaluate_loss``'s NLL is unchanged).
    """
    flat, tgt = logits.reshape(-1, logits.size(-1)).float(), target.reshape(-1)
    if smoothing == 0.0:
        return F.cross_entropy(flat, tgt, ignore_index=pad_id)
    keep = tgt.ne(pad_id)
    logp = flat[keep].log_softmax(-1)  # [N, V], N = non-pad target positions
    nll = -logp.gather(1, tgt[keep][:, None]).squeeze(1)
    uniform = -(logp.sum(-1) - logp[:, pad_id]) / (logp.size(-1) - 1)  # mean over the V − 1 non-pad tokens
    return ((1.0 - smoothing) * nll + smoothing * uniform).mean()


def make_optimizer(model: nn.Module) -> torch.optim.Adam:
    """Adam over all of ``model``'s parameters with the paper's β = (0.9, 0.98), ε = 1e-9 (§5.3) and
    a learning rate of 0: each update sets its own with :func:`set_learning_rate`."""
    return torch.optim.Adam(model.parameters(), lr=0.0, betas=ADAM_BETAS, eps=ADAM_EPS)


def set_learning_rate(opt: torch.optim.Optimizer, lr: float) -> None:
    """Give every parameter group of ``opt`` the rate ``lr``."""
    for g in opt.param_groups:
        g["lr"] = lr


@dataclass(frozen=True)
class Schedule:
    """The learning rate per update: :func:`core.training.schedule.learning_rate` (paper Eq. 3,
    ``lr_scale · d_model^-0.5 · min(step^-0.5, step · warmup^-1.5)``, with an optional linear
    cool-down to 0 over the last ``cooldown`` updates before ``max_steps``)."""

    d_model: int
    warmup: int
    lr_scale: float = 1.0
    max_steps: int = 0
    cooldown: int = 0

    def rate(self, step: int) -> float:
        """The rate of update ``step`` (1-based). Raises ValueError for a negative ``cooldown``."""
        return learning_rate(step, self.d_model, self.warmup, self.lr_scale, self.max_steps, self.cooldown)


@dataclass(frozen=True)
class StepResult:
    """What one update did: ``loss`` the (label-smoothed) token-mean loss of the batch before the
    update (nats/token), ``tokens`` the non-pad target tokens it was computed on, ``lr`` the rate
    used, ``grad_norm`` the total gradient L2 norm before clipping."""

    loss: float
    tokens: int
    lr: float
    grad_norm: float


def teacher_forced_logits(model: Transformer, src: Tensor, tgt_in: Tensor, causal: bool = True) -> Tensor:
    """Logits ``[B, T, V]`` for ``src [B, S]`` and decoder input ``tgt_in [B, T]``, exactly as
    ``model(src, tgt_in)`` when ``causal``; with ``causal=False`` the decoder self-attention gets no
    causal mask (target padding only, True = masked), so each position may see the future: the
    "why the mask exists" demonstration, trainable here."""
    if causal:
        return model(src, tgt_in)
    enc = model.encode(src)
    tgt_kpm = key_padding_mask(tgt_in, model.config.pad_id)
    if model.config.start_id == model.config.pad_id:
        tgt_kpm[:, 0] = False
    return model.decode(tgt_in, enc.memory, enc.src_key_padding_mask, tgt_kpm, causal=False).logits


def forward_loss(
    net: nn.Module,
    src: Tensor,
    tgt: Tensor,
    pad_id: int,
    label_smoothing: float,
    use_amp: bool = False,
    causal: bool = True,
) -> tuple[Tensor, int]:
    """The training loss of one batch and its token count, before any backward pass.

    Args:
        net: the model, or its DDP wrapper (then ``causal`` must be True).
        src: ``[B, S]`` source ids, ``pad_id`` after each sentence.
        tgt: ``[B, T+1]`` target ids ``[BOS] … [EOS]`` padded; decoder input ``tgt[:, :-1]``,
            prediction target ``tgt[:, 1:]``.
        use_amp: bfloat16 autocast for the forward pass; the loss is computed in float32.
        causal: False trains without the causal mask (see :func:`teacher_forced_logits`).
    Returns:
        (scalar loss tensor in nats/token, number of non-pad target tokens).
    """
    with torch.autocast(src.device.type, dtype=torch.bfloat16, enabled=use_amp):
        logits = (
            net(src, tgt[:, :-1]) if causal else teacher_forced_logits(cast(Transformer, net), src, tgt[:, :-1], causal=False)
        )
    loss = loss_fn(logits, tgt[:, 1:], pad_id, label_smoothing)
    return loss, int(tgt[:, 1:].ne(pad_id).sum())


def apply_update(model: nn.Module, opt: torch.optim.Optimizer, loss: Tensor, clip: float) -> float:
    """Backward pass of ``loss``, gradient-norm clipping to ``clip`` over ``model``'s parameters,
    one optimizer step. Returns the gradient norm before clipping."""
    opt.zero_grad(set_to_none=True)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    opt.step()
    return float(norm)


def train_step(
    model: Transformer,
    opt: torch.optim.Optimizer,
    src: Tensor,
    tgt: Tensor,
    lr: float,
    label_smoothing: float = 0.1,
    clip: float = 1.0,
    use_amp: bool = False,
    causal: bool = True,
) -> StepResult:
    """One update of ``model`` (in train mode) on one batch: set the rate ``lr``, forward and loss
    (:func:`forward_loss`), backward, clip, Adam step (:func:`apply_update`). Shapes as in
    :func:`forward_loss`; the batch must hold at least one non-pad target token."""
    set_learning_rate(opt, lr)
    loss, n_tok = forward_loss(model, src, tgt, model.config.pad_id, label_smoothing, use_amp, causal)
    norm = apply_update(model, opt, loss, clip)
    return StepResult(float(loss.detach()), n_tok, lr, norm)
