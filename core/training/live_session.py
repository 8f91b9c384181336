"""Train a small Transformer on a toy task one update at a time, and look at it as it learns.

A :class:`LiveSession` holds one model, its Adam optimizer and its own random state; the
update is :func:`core.training.step.train_step` (the loss, optimizer, schedule and clipping of
``python -m core train``). It uses no module state, so a worker thread may own one (drive each
session from one thread at a time). Same task, settings and seed: the same run, update for
update (with ``dropout > 0`` as long as no other code draws from torch's global generator while
:meth:`LiveSession.step` runs: its state is swapped in and out around the updates).

    session = LiveSession("copy", LiveSettings(d_model=64, n_heads=4, layers=2), seed=0)
    while session.updates < 600:
        session.step(50)
        ev = session.evaluate()          # losses, accuracy, alignment, the probe's maps
        frames.append(session.snapshot(ev))
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from core.training.alignment import best_head, encode_examples, head_agreement, probe_batch
from core.training.data import collate
from core.training.live_probe import Evaluation, ProbeMaps, greedy_ids, probe_maps
from core.training.step import Schedule, loss_fn, make_optimizer, teacher_forced_logits, train_step
from core.training.toy_tasks import ToyTask, make_task
from core.transformer.config import ModelConfig
from core.transformer.model import Transformer


@dataclass
class LiveSettings:
    """What a lecturer may change. ``peak_lr``: the highest learning rate, reached after
    ``warmup`` updates, then falling as 1/√step (the paper's schedule, Eq. 3, scaled to this peak).
    ``causal``: False trains (and scores) without the decoder's causal mask. ``threads``: 0 leaves
    torch's thread count as the caller set it; n > 0 calls ``torch.set_num_threads(n)``.

    Raises:
        ValueError: from :meth:`validate` (the message names the setting).
    """

    d_model: int = 64
    n_heads: int = 4
    layers: int = 2
    d_ff: int = 256
    dropout: float = 0.0
    peak_lr: float = 3e-3
    warmup: int = 100
    batch_size: int = 64
    label_smoothing: float = 0.0
    clip: float = 1.0
    causal: bool = True
    norm_first: bool = True
    threads: int = 0

    def validate(self) -> None:
        if self.layers < 1 or self.d_model < 1 or self.n_heads < 1 or self.batch_size < 1 or self.warmup < 1:
            raise ValueError("layers, d_model, n_heads, batch_size and warmup must be >= 1")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model {self.d_model} is not divisible by n_heads {self.n_heads}")
        if not 0.0 < self.peak_lr <= 1.0:
            raise ValueError(f"peak_lr must be in (0, 1], got {self.peak_lr}")
        if not 0.0 <= self.label_smoothing < 1.0 or not 0.0 <= self.dropout < 1.0:
            raise ValueError("label_smoothing and dropout must be in [0, 1)")

    def model_config(self, task: ToyTask) -> ModelConfig:
        """The :class:`ModelConfig` for ``task``: one shared character vocabulary, embeddings tied
        three ways, ``max_len`` covering the task's longest pair."""
        return ModelConfig(
            src_vocab_size=task.vocab.size,
            tgt_vocab_size=task.vocab.size,
            d_model=self.d_model,
            n_heads=self.n_heads,
            n_encoder_layers=self.layers,
            n_decoder_layers=self.layers,
            d_ff=self.d_ff,
            dropout=self.dropout,
            max_len=task.max_chars + 2,
            share_src_tgt_embed=True,
            norm_first=self.norm_first,
        )

    def schedule(self) -> Schedule:
        """The Noam schedule whose rate at update ``warmup`` is ``peak_lr``."""
        scale = self.peak_lr / (self.d_model**-0.5 * self.warmup**-0.5)
        return Schedule(d_model=self.d_model, warmup=self.warmup, lr_scale=scale)


@dataclass(frozen=True)
class StepMetrics:
    """After :meth:`LiveSession.step`: ``updates`` done so far, the mean training loss of the
    updates just made (nats/token, label-smoothed as trained), target ``tokens`` they saw, the
    last learning rate and ``seconds`` of wall time they took."""

    updates: int
    train_loss: float
    tokens: int
    lr: float
    seconds: float


@dataclass(frozen=True)
class Snapshot:
    """A picklable record of the run at one moment, for scrubbing: ``updates``, ``wall_s`` of
    training so far (s), the :class:`Evaluation` (losses, accuracy, alignment, probe maps as numpy)."""

    updates: int
    wall_s: float
    evaluation: Evaluation


@dataclass
class LiveSession:
    """One toy-task training run (see the module docstring).

    Args:
        task: a :class:`ToyTask` or a task name for :func:`make_task` (``path`` for ``file``).
        settings: :class:`LiveSettings` (validated here).
        seed: model initialisation, batch order and dropout.
    Raises:
        ValueError: bad settings or task name. InputError: a task file that cannot be used.
    """

    task: ToyTask | str
    settings: LiveSettings = field(default_factory=LiveSettings)
    seed: int = 0
    path: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.task, str):
            self.task = make_task(self.task, seed=self.seed, path=self.path)
        self.settings.validate()
        self.config = self.settings.model_config(self.task)
        self._train_ids = encode_examples(self.task, self.task.train)
        self._train_eval = probe_batch(self.task, self.task.train[: len(self.task.probe)])
        self.probe = probe_batch(self.task)
        self.snapshots: list[Snapshot] = []
        self.reset()

    def reset(self) -> None:
        """Back to update 0: a freshly initialised model from ``seed``, a new optimizer, no snapshots."""
        if self.settings.threads:
            torch.set_num_threads(self.settings.threads)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            self.model = Transformer(self.config).train()
            self._rng = torch.get_rng_state()
        self._batches = torch.Generator().manual_seed(self.seed * 7919 + 1)
        self.opt = make_optimizer(self.model)
        self.schedule = self.settings.schedule()
        self.updates, self.wall_s, self.last_loss = 0, 0.0, float("nan")
        self.snapshots.clear()

    def step(self, n: int = 1, should_stop: Callable[[], bool] | None = None) -> StepMetrics:
        """Make ``n`` updates (fewer when ``should_stop()`` turns True, asked before each), each on
        ``batch_size`` training pairs drawn at random. Returns :class:`StepMetrics`."""
        s, losses, tokens, lr = self.settings, [], 0, 0.0
        t0 = time.perf_counter()
        self.model.train()
        with torch.random.fork_rng(devices=[]):
            torch.set_rng_state(self._rng)
            for _ in range(n):
                if should_stop is not None and should_stop():
                    break
                idx = torch.randint(len(self._train_ids), (s.batch_size,), generator=self._batches).tolist()
                src, tgt = collate(self._train_ids, idx, 0)
                lr = self.schedule.rate(self.updates + 1)
                r = train_step(self.model, self.opt, src, tgt, lr, s.label_smoothing, s.clip, causal=s.causal)
                self.updates += 1
                losses.append(r.loss)
                tokens += r.tokens
            self._rng = torch.get_rng_state()
        seconds = time.perf_counter() - t0
        self.wall_s += seconds
        if losses:
            self.last_loss = float(np.mean(losses))
        return StepMetrics(self.updates, self.last_loss, tokens, lr, seconds)

    @torch.no_grad()
    def _loss(self, src: torch.Tensor, tgt: torch.Tensor) -> float:
        logits = teacher_forced_logits(self.model, src, tgt[:, :-1], self.settings.causal)
        return float(loss_fn(logits, tgt[:, 1:], 0, 0.0))

    @torch.no_grad()
    def evaluate(self) -> Evaluation:
        """Score the model now (in eval mode; training mode is restored): teacher-forced NLL
        (nats/token, no smoothing, the run's causal setting) on as many training pairs as the probe
        set holds and on the held-out probe set; greedy decoding of the probe set (always causal)
        for exact-match and per-character accuracy; the alignment agreement of every cross-attention
        head on the probe set (None for a task without a known alignment); the maps of probe 0."""
        self.model.eval()
        task = self.task
        assert isinstance(task, ToyTask)  # (made in __post_init__)
        try:
            p = self.probe
            train_nll = self._loss(self._train_eval.src, self._train_eval.tgt)
            held_nll = self._loss(p.src, p.tgt)
            out = greedy_ids(self.model, p.src, p.tgt.size(1) + 2)
            refs = [task.vocab.encode(e.tgt) for e in task.probe]
            hyps = [row[: len(r) + 1] for row, r in zip(out, refs)]
            exact = float(np.mean([h[: len(r)] == r and h[len(r) :] == [2] for h, r in zip(hyps, refs)]))
            chars = sum(sum(a == b for a, b in zip(h, r)) for h, r in zip(hyps, refs)) / sum(map(len, refs))
            maps, cross = probe_maps(self.model, task, p, self.settings.causal)
            agreement = head_agreement(cross, p.allowed, p.scored) if task.has_alignment else None
            best = best_head(agreement) if agreement is not None else None
            return Evaluation(
                updates=self.updates,
                train_loss=self.last_loss,
                train_nll=train_nll,
                heldout_nll=held_nll,
                accuracy=exact,
                char_accuracy=float(chars),
                alignment=None if best is None else best[2],
                best_head=None if best is None else best[:2],
                head_agreement=None if agreement is None else agreement.numpy(),
                outputs=[task.vocab.decode(h) for h in hyps[:8]],
                maps=maps,
            )
        finally:
            self.model.train()

    def snapshot(self, evaluation: Evaluation | None = None) -> Snapshot:
        """Record ``evaluation`` (default: :meth:`evaluate` now) in ``snapshots`` and return it."""
        snap = Snapshot(self.updates, self.wall_s, evaluation or self.evaluate())
        self.snapshots.append(snap)
        return snap


__all__ = ["Evaluation", "LiveSession", "LiveSettings", "ProbeMaps", "Snapshot", "StepMetrics"]
