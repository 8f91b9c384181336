"""What :func:`core.training.adapt.adapt` is told: :class:`AdaptOptions`, their limits, and
:data:`HOLD_GENERAL`, the recipe that keeps a model's general translations (the Adapt tab's
default, ``python -m core adapt --hold-general``). Plain data: no torch, no Qt."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.errors import InputError

MAX_STEPS = 1000
#: "Hold general translations": the replay pairs trained toward the model's own translations and token
#: distributions, dropout off, the weights mixed 0.9 / 0.1 with the original, a low rate, and a stop once
#: every pair is translated within one word by the model as saved; at most :data:`HOLD_STEPS` updates.
#: Measured on ko-en-nc with its shipped Adam moments (bench.adapt, 20 lecture pairs, seeds 1-8,
#: docs/cli.md): every pair learned in 20 updates, held-out Tatoeba chrF +0.14 to -0.35 (mean -0.11),
#: Tatoeba-test +0.03 to -0.32 (mean -0.15), paraphrases +5.3 to +7.7.
HOLD_GENERAL: dict[str, Any] = {
    "replay_own": True,
    "distill": 1.0,
    "base_weight": 0.1,
    "lr_scale": 0.02,
    "stop_when_learned": True,
    "dropout": False,
}
HOLD_STEPS = 100


@dataclass
class AdaptOptions:
    """``steps``: updates (1-1,000). ``warmup``, ``lr_scale``: the schedule of a warm start
    (peak rate ``lr_scale · d_model^-0.5 · warmup^-0.5`` at update ``warmup``; the last half of the
    updates cool down linearly to 0). ``replay``: replay pairs per update for each user pair (0:
    none). ``label_smoothing``, ``clip``: as in training. ``seed``: batches and dropout.
    ``threads``: 0 keeps torch's setting. ``base_weight`` w: after the updates every weight becomes
    (1 − w)·adapted + w·base, an element-wise mean of the two models as checkpoint averaging makes
    (weight-space ensembling, Wortsman et al. 2022, "Robust fine-tuning of zero-shot models"): it
    keeps more of what the base could translate; 0 keeps the adapted weights.
    ``train_embeddings``: False keeps the token embeddings (and the output projection tied to them)
    as they are, so the adapted words are not made more probable everywhere. ``replay_own``: the
    replay pairs' targets are the checkpoint's own greedy translations of their sources instead of
    their references (sequence-level self-distillation, Kim & Rush 2016): the replay then asks the
    model to keep translating as it did, not to learn the references. ``distill`` d > 0: the replay
    pairs are trained toward the base model's token distributions instead of their targets, a
    term d · KL(base ‖ model) (:func:`core.training.adapt_anchor.distill_step`). ``low_rank`` r > 0:
    only rank-r adapters on the linear layers matching ``low_rank_modules`` (comma-separated globs)
    train, merged into the weights before saving (LoRA). ``train_only``: comma-separated globs of
    the parameter names that train (all others frozen; empty: all). ``stop_when_learned``: every
    5 updates from the end of warm-up, stop once every pair is translated (greedy) within one word
    of its reference. ``moments``: continue the Adam of the training run the checkpoint came from
    instead of a fresh one (:mod:`core.training.adapt_moments`): ``"auto"`` the checkpoint's own
    ``adam_moments.safetensors`` when it ships one for its weights (else a fresh Adam), a training
    step folder or such a file, or ``""`` for a fresh Adam; its ``exp_avg_sq`` (v) is continued
    with the step count, ``moments_exp_avg`` also continues its ``exp_avg`` (m; else m starts at 0).
    ``dropout``: False trains with every dropout off (the model as it translates), so that at the
    first update the distillation term on the replay pairs has no gradient: only the user's pairs
    move the weights, not the gap between the model with and without dropout."""

    steps: int = 30
    warmup: int = 10
    lr_scale: float = 0.05
    replay: float = 1.0
    label_smoothing: float = 0.1
    clip: float = 1.0
    seed: int = 1
    threads: int = 0
    base_weight: float = 0.0
    train_embeddings: bool = True
    replay_own: bool = False
    distill: float = 0.0
    low_rank: int = 0
    low_rank_modules: str = "decoder_layers.*"
    train_only: str = ""
    stop_when_learned: bool = False
    moments: str = "auto"
    moments_exp_avg: bool = False
    dropout: bool = True

    def validate(self) -> None:
        if not 1 <= self.steps <= MAX_STEPS:
            raise InputError(f"steps must be 1 to {MAX_STEPS}, got {self.steps}")
        if self.warmup < 1 or self.lr_scale <= 0 or self.replay < 0:
            raise InputError("warmup must be >= 1, lr_scale > 0 and replay >= 0")
        if not 0.0 <= self.base_weight < 1.0:
            raise InputError(f"base_weight must be in [0, 1), got {self.base_weight}")
        if self.distill < 0 or self.low_rank < 0:
            raise InputError("distill and low_rank must be >= 0")
