"""Adapt a trained checkpoint to a few pairs of a user's (a lecturer's own sentences) and save the
result as a new model in the normal checkpoint format.

A copy of the checkpoint is fine-tuned for a bounded number of updates with the training code of
``python -m core train`` (:func:`core.training.step.train_step`: label-smoothed loss, Adam
(0.9, 0.98, 1e-9), the warm-up / inverse-square-root schedule with a linear cool-down to 0,
gradient clipping), as a warm start does: the weights kept, a fresh optimizer and warm-up (or, when
the checkpoint ships the moments of its training run, that run's Adam continued:
:mod:`core.training.adapt_moments`). Every update sees all the user's pairs (at most 32 drawn at
random when there are more) and as many pairs of the checkpoint's replay set
(:mod:`core.training.replay`), so the model does not forget.

Qt-free; the app calls :func:`adapt` from a worker with ``progress`` and ``should_cancel``::

    result = adapt("checkpoints/ko-en-nc", pairs, out, "my-lecture",
                   progress=lambda done, total, loss: ..., should_cancel=lambda: cancelled)
"""

from __future__ import annotations

import copy
import json
import logging
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from core.checkpoints.atomic_io import atomic_dir
from core.checkpoints.checkpoint import load_checkpoint, write_checkpoint_files
from core.checkpoints.output_folder import claim_output
from core.errors import InputError, StudioError
from core.training import adapt_anchor as anchor
from core.training import adapt_moments
from core.training.adapt_options import AdaptOptions
from core.training.data import collate, encode_pairs
from core.training.replay import REPLAY, load_replay
from core.training.step import Schedule, make_optimizer, train_step

log = logging.getLogger("core.training.adapt")
MAX_PAIRS = 2000
ADAPTED = "adapted.json"


class AdaptCancelled(StudioError):
    """``should_cancel()`` turned True: nothing was written, the checkpoint is unchanged."""


@dataclass
class AdaptResult:
    """``path`` of the saved model; ``steps`` made; ``seconds`` of wall time (load and save
    included); ``losses``: the training loss of each update (nats/token, label-smoothed);
    ``pairs`` / ``replay_pairs``: how many of each the updates drew from."""

    path: Path
    steps: int
    seconds: float
    losses: list[float] = field(default_factory=list)
    pairs: int = 0
    replay_pairs: int = 0


def _globs(text: str) -> tuple[str, ...]:
    return tuple(g.strip() for g in text.split(",") if g.strip())


def _other_options(opts: AdaptOptions) -> str:
    """``"; options: distill=1.0, …"`` for the options not at their defaults beyond the schedule's."""
    d, skip = AdaptOptions(), {"steps", "warmup", "lr_scale", "replay", "label_smoothing", "seed", "threads"}
    diff = [f"{k}={v}" for k, v in asdict(opts).items() if k not in skip and v != getattr(d, k)]
    return f"; options: {', '.join(diff)}" if diff else ""


def _card(
    name: str,
    base: Path,
    source: str,
    pairs: list[tuple[str, str]],
    opts: AdaptOptions,
    n_replay: int,
    base_card: str,
    steps: int,
    moments: bool,
) -> str:
    adam = "Adam continued from its training run" if moments else "fresh Adam"
    lines = [
        f"# {name}",
        "",
        f"**Adapted** from `{base.name}` on {len(pairs)} pair(s) from {source}, {steps} updates "
        f"(warm start: {adam}, warm-up {opts.warmup}, lr-scale {opts.lr_scale}, cool-down over the last half; "
        f"label smoothing {opts.label_smoothing}), each update mixing in {opts.replay:g} replay pair(s) per pair "
        f"from the {n_replay} of `{base.name}/{REPLAY}`{_other_options(opts)}. "
        "Made by `python -m core adapt` (or the app's Adapt).",
        "",
        "## Adapted on",
        "",
        *(f"- {ko} → {en}" for ko, en in pairs[:50]),
        *([f"- … and {len(pairs) - 50} more (all in `{ADAPTED}`)"] if len(pairs) > 50 else []),
        "",
        f"## The model it was adapted from: {base.name}",
        "",
        base_card,
    ]
    return "\n".join(lines)


def _mix_base(model: torch.nn.Module, base_state: dict[str, torch.Tensor], weight: float) -> None:
    """Weights ← (1 − ``weight``) · weights + ``weight`` · the base's, in place (tied matrices once)."""
    seen: set[int] = set()
    with torch.no_grad():
        for k, v in model.state_dict().items():
            if v.is_floating_point() and v.data_ptr() not in seen:
                seen.add(v.data_ptr())
                v.mul_(1.0 - weight).add_(base_state[k], alpha=weight)


def _learned_as_saved(ckpt, pairs: list[tuple[str, str]], base_state, opts: AdaptOptions) -> int:
    """How many ``pairs`` the model translates within one word as it would be saved now: with
    ``base_weight`` of the base mixed in (checked on the mixed weights, then the trained ones put
    back), so stopping early never saves a model that no longer knows a pair. With low-rank
    adapters the check reads the trained model (the mix applies to the merged weights)."""
    if base_state is None or opts.low_rank:
        return anchor.pairs_learned(ckpt, pairs)
    model = ckpt.model
    trained = {k: v.detach().clone() for k, v in model.state_dict().items()}
    _mix_base(model, base_state, opts.base_weight)
    try:
        return anchor.pairs_learned(ckpt, pairs)
    finally:
        model.load_state_dict(trained)


def adapt(
    checkpoint: str | Path,
    pairs: list[tuple[str, str]],
    out: str | Path,
    name: str,
    options: AdaptOptions | None = None,
    source: str = "the given pairs",
    progress: Callable[[int, int, float], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
    force: bool = False,
) -> AdaptResult:
    """Fine-tune a copy of ``checkpoint`` on ``pairs`` (Korean, English) and save it to ``out``.

    ``progress(done, total, loss)`` is called after each update (loss in nats/token);
    ``should_cancel()`` is asked before each update and before saving. ``out`` is written
    atomically (built under a temporary name, then renamed): the checkpoint format with a card
    saying what the model was adapted on, ``adapted.json`` (the base, the pairs, the options, the
    losses) and the base's ``replay.tsv`` (so the result can be adapted again). ``out`` must be a
    new or empty folder, or with ``force`` an existing checkpoint folder (replaced as a whole).

    Raises:
        InputError: no pairs, too many, a pair too long for the model, bad options, or the
            checkpoint ships no replay set while ``replay`` > 0.
        CheckpointError: ``checkpoint`` cannot be loaded; ``out`` may not be written
            (:func:`~core.checkpoints.output_folder.claim_output`: the checkpoint itself, a folder
            holding other files, an existing model without ``force``).
        AdaptCancelled: cancelled; nothing was written.
        OSError: the disk is full or not writable (``out`` is left as it was).
    """
    t0 = time.perf_counter()
    opts = options or AdaptOptions()
    opts.validate()
    if not pairs:
        raise InputError("no pairs to adapt on")
    if len(pairs) > MAX_PAIRS:
        raise InputError(f"{len(pairs)} pairs; adapt takes at most {MAX_PAIRS:,} (it is for a lecturer's own sentences)")
    base = Path(checkpoint)
    out = claim_output(out, force, inputs=(base,))
    ckpt = load_checkpoint(base, device="cpu")
    replay = load_replay(base) if opts.replay > 0 else []
    if opts.replay > 0 and not replay:
        raise InputError(f"{base}: ships no {REPLAY} (general pairs to mix in); give --replay 0 to adapt without")
    c = ckpt.config
    mine = encode_pairs(pairs, ckpt.src_tokenizer, ckpt.tgt_tokenizer, c.max_len, c.eos_id, c.bos_id)
    if len(mine) < len(pairs):
        raise InputError(f"{len(pairs) - len(mine)} pair(s) are longer than the model's {c.max_len} tokens")
    if replay and opts.replay_own:
        from core.evaluation.evaluate import translate_corpus

        log.info("translating the %d replay sources with the model: its own translations are their targets", len(replay))
        own = translate_corpus(ckpt, [ko for ko, _ in replay])
        replay = [(ko, en) for (ko, _), en in zip(replay, own) if en.strip()]
    general = encode_pairs(replay, ckpt.src_tokenizer, ckpt.tgt_tokenizer, c.max_len, c.eos_id, c.bos_id)
    if opts.threads:
        torch.set_num_threads(opts.threads)
    model = ckpt.model.train(opts.dropout)
    try:
        moments_file = adapt_moments.resolve(opts.moments, base)
        moments = adapt_moments.load_moments(moments_file, model) if moments_file else None
    except (OSError, ValueError) as e:
        raise InputError(f"moments: {e}") from None
    base_state = {k: v.detach().clone() for k, v in model.state_dict().items()} if opts.base_weight else None
    teacher = copy.deepcopy(model).eval().requires_grad_(False) if opts.distill and general else None
    try:
        if opts.train_only:
            anchor.train_only(model, _globs(opts.train_only))
        if opts.low_rank:
            anchor.add_low_rank(model, opts.low_rank, _globs(opts.low_rank_modules), seed=opts.seed)
    except ValueError as e:
        raise InputError(str(e)) from None
    if not opts.train_embeddings:
        for module in (model.src_embed, model.tgt_embed, model.generator):
            module.weight.requires_grad_(False)
    opt = make_optimizer(model)
    if moments is not None:
        n = adapt_moments.warm_start_adam(opt, model, moments, exp_avg=opts.moments_exp_avg)
        log.info("Adam continued from %s (step %d) for %d parameters", moments_file, moments.step, n)
    sched = Schedule(c.d_model, opts.warmup, opts.lr_scale, opts.steps, cooldown=opts.steps // 2)
    rng = random.Random(opts.seed)
    per_step = min(len(mine), 32)
    n_general = round(per_step * opts.replay) if general else 0
    losses: list[float] = []
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(opts.seed)
        for step in range(1, opts.steps + 1):
            if should_cancel is not None and should_cancel():
                raise AdaptCancelled(f"adapting cancelled after {step - 1} of {opts.steps} updates; nothing was saved")
            batch = rng.sample(mine, per_step) + [rng.choice(general) for _ in range(n_general)]
            if teacher is not None and n_general:
                m = collate(batch[:per_step], list(range(per_step)), c.pad_id)
                g = collate(batch[per_step:], list(range(n_general)), c.pad_id)
                lr = sched.rate(step)
                r = anchor.distill_step(model, teacher, opt, m, g, lr, opts.distill, opts.label_smoothing, opts.clip)
            else:
                src, tgt = collate(batch, list(range(len(batch))), c.pad_id)
                r = train_step(model, opt, src, tgt, sched.rate(step), opts.label_smoothing, opts.clip)
            losses.append(r.loss)
            if progress is not None:
                progress(step, opts.steps, r.loss)
            if opts.stop_when_learned and step >= opts.warmup and step % 5 == 0 and step < opts.steps:
                if _learned_as_saved(ckpt, pairs, base_state, opts) == len(pairs):
                    break
    if should_cancel is not None and should_cancel():
        raise AdaptCancelled(f"adapting cancelled after {opts.steps} updates, before saving; nothing was saved")
    model.eval()
    anchor.merge_low_rank(model)
    if base_state is not None:
        _mix_base(model, base_state, opts.base_weight)
    base_card = (base / "README.md").read_text(encoding="utf-8") if (base / "README.md").is_file() else ""
    card = _card(name, base, source, pairs, opts, len(replay), base_card, len(losses), moments is not None)
    record = {
        "name": name,
        "adapted_from": str(base),
        "source": source,
        "pairs": [list(p) for p in pairs],
        "replay_pairs": len(replay),
        "options": asdict(opts),
        "moments_from": str(moments_file) if moments_file else None,
        "losses": losses,
    }
    with atomic_dir(out) as tmp:
        write_checkpoint_files(tmp, model, ckpt.src_tokenizer, ckpt.tgt_tokenizer, card, name=name)
        (tmp / ADAPTED).write_text(json.dumps(record, ensure_ascii=False, indent=1), encoding="utf-8")
        if replay:
            (tmp / REPLAY).write_text((base / REPLAY).read_text(encoding="utf-8"), encoding="utf-8")
    seconds = time.perf_counter() - t0
    log.info("adapted %s on %d pairs in %d updates (%.1f s): %s", base.name, len(pairs), len(losses), seconds, out)
    return AdaptResult(out, len(losses), seconds, losses, len(mine), len(general))
