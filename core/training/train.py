"""Training loop (paper §5): Adam β=(0.9, 0.98), ε=1e-9, warm-up then inverse-square-root
learning rate (Eq. 3, §5.3), label smoothing (§5.4), dropout, gradient clipping,
length-bucketed batches. Writes crash-safe checkpoints in the shipped format while it runs
(core/training/run_folder.py) and resumes a stopped run exactly from its newest complete save
(weights, Adam moments, step, batch position, RNG).
Under ``torchrun`` the same loop runs data-parallel (see core/training/distributed.py)."""

from __future__ import annotations

import gc
import json
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from core.checkpoints.atomic_io import atomic_dir, write_text_atomic
from core.checkpoints.checkpoint import load_checkpoint, save_checkpoint, write_checkpoint_files
from core.device import cpu_bf16_native, cpu_capability
from core.evaluation.validation import valid_chrf
from core.training import distributed as dist_util
from core.training.data import DataSpec, collate, encode_pairs, make_batches, read_parallel
from core.training.run_folder import RunLock, has_saves, newest_complete_save, prune, step_dirs, tidy, trim_log
from core.training.schedule import learning_rate
from core.training.state import load_train_state, save_train_state
from core.training.step import apply_update, forward_loss, loss_fn, make_optimizer, set_learning_rate
from core.training.summary import model_card, training_summary  # noqa: F401  (re-exported)
from core.training.vocab import run_tokenizers
from core.transformer.config import ModelConfig, check_fits_memory
from core.transformer.model import Transformer

log = logging.getLogger("core.training.train")


@dataclass
class TrainOptions:
    """Everything a run needs; saved as ``options.json`` in the run directory.

    ``max_tokens``: padded tokens per optimizer step (longest side × sentences); under torchrun
    this is the *global* batch, split over the processes (each gets about max_tokens / W).
    ``dist_timeout``: seconds any rank waits for the others before the run stops with an error.
    ``joint_vocab``: when > 0, one BPE vocabulary of this size over Korean and English, with
    source embedding, target embedding and output projection tied (three-way); 0 keeps
    separate ``src_vocab``/``tgt_vocab`` vocabularies.
    ``precision``: "fp32", or "bf16" = autocast to bfloat16 for the forward pass with fp32
    master weights, optimizer state and loss (CPU with AVX512-BF16, or CUDA).
    ``encoder_layers``/``decoder_layers``: depths of the two stacks when they differ (0 = ``layers``).
    ``reverse``: train English→Korean from the same ``PREFIX.ko``/``PREFIX.en`` files (the model
    that back-translates English text into synthetic Korean sources).
    ``init_from``: warm-start from a checkpoint directory (weights and tokenizers; fresh
    optimizer and warm-up). ``chrf_lines``: greedy-translate the first N validation pairs
    at every validation and keep the best-chrF checkpoint in ``OUT/best``.
    """

    train: list[str]
    valid: list[str]
    out: str
    src_vocab: int = 8000
    tgt_vocab: int = 8000
    d_model: int = 256
    n_heads: int = 4
    layers: int = 3
    encoder_layers: int = 0
    decoder_layers: int = 0
    d_ff: int = 1024
    dropout: float = 0.1
    max_len: int = 128
    positional: str = "sinusoidal"
    max_tokens: int = 2000
    max_steps: int = 10000
    max_minutes: float = 0.0
    warmup: int = 1000
    lr_scale: float = 1.0
    cooldown: int = 0
    label_smoothing: float = 0.1
    clip: float = 1.0
    seed: int = 1
    device: str = "auto"
    threads: int = 0
    valid_every: int = 500
    save_every: int = 500
    keep: int = 5
    joint_vocab: int = 0
    norm_first: bool = False
    attention_dropout: float | None = None
    activation_dropout: float | None = None
    precision: str = "fp32"
    init_from: str = ""
    reverse: bool = False
    chrf_lines: int = 0
    dist_timeout: float = 1800.0
    extra: dict = field(default_factory=dict)


PRECISIONS = ("fp32", "bf16")
# Options a resumed run may change: the budget and where it runs. Any other option given with
# --resume must equal the saved value (re-running the original command is a resume).
# A cool-down may be added when resuming: it only changes the rate of the updates still to come.
RESUMABLE_CHANGES = frozenset({"max_steps", "max_minutes", "threads", "device", "out", "dist_timeout", "keep", "cooldown"})


def resume_options(saved: dict, given: dict) -> dict:
    """The saved options with the allowed changes from ``given`` applied.

    Raises:
        ValueError: ``given`` changes an option outside :data:`RESUMABLE_CHANGES`; the message names
            the option, the saved value and the given one.
    """
    changed = [
        f"{k} (saved {saved.get(k)!r}, given {v!r})"
        for k, v in sorted(given.items())
        if k not in RESUMABLE_CHANGES and saved.get(k, TrainOptions.__dataclass_fields__[k].default) != v
    ]
    if changed:
        raise ValueError("--resume continues the saved run; these options cannot change: " + "; ".join(changed))
    return {**saved, **given}


def _load_sets(specs: list[str], reverse: bool = False) -> tuple[list[tuple[str, str]], dict[str, int]]:
    """(source, target) pairs of every ``PREFIX[*W]`` (Korean→English; English→Korean when
    ``reverse``), each set repeated W times, and the pair count per set."""
    pairs, counts = [], {}
    for raw in specs:
        spec = DataSpec.parse(raw)
        p = read_parallel(spec.prefix, *(("en", "ko") if reverse else ("ko", "en")))
        counts[f"{spec.name}*{spec.weight}"] = len(p)
        pairs.extend(p * spec.weight)
    return pairs, counts


@torch.no_grad()
def evaluate_loss(
    model: Transformer, examples: list, max_tokens: int, device: torch.device, ctx: dist_util.DistContext | None = None
) -> float:
    """Mean per-token negative log-likelihood (nats, no smoothing) over ``examples``; with a
    multi-process ``ctx`` each rank scores its share of the batches (collective: call on all ranks)."""
    model.eval()
    total, count = 0.0, 0
    pad = model.config.pad_id
    batches = make_batches(examples, max_tokens, seed=0)
    for idx in ctx.shard(batches) if ctx else batches:
        src, tgt = (t.to(device) for t in collate(examples, idx, pad))
        logits = model(src, tgt[:, :-1])
        n = int(tgt[:, 1:].ne(pad).sum())
        total += float(loss_fn(logits, tgt[:, 1:], pad, 0.0)) * n
        count += n
    model.train()
    if ctx is not None and ctx.distributed:
        total, summed = ctx.all_reduce_sum([total, count])
        return total / max(summed, 1)
    return total / max(count, 1)


def train(
    opts: TrainOptions,
    resume: bool = False,
    overrides: dict | None = None,
    on_step: Callable[[int, Transformer], None] | None = None,
) -> Path:
    """Train (or resume) a run in ``opts.out``; returns the directory of the last checkpoint.

    On resume the saved ``options.json`` is used and the newest complete save is loaded (damaged
    ones are skipped with a warning); ``overrides`` may change only the budget (see
    :func:`resume_options`); a run already at ``max_steps`` trains nothing. Under torchrun every
    process runs this (DDP, rank 0 writes); a run may resume on another number of processes (same
    global batches; dropout reseeded, logged).
    ``on_step(step, model)`` is called after every optimizer step (tests inspect replicas).

    Raises:
        DistributedTrainingError: under torchrun, another rank died or the timeout passed.
        RunLockedError: another process is training into ``opts.out``.
        ValueError: a new run into a folder that holds saves; a changed option on resume; nothing to resume.
        OSError: a save could not be written (full disk); earlier saves are intact.
    """
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    lock = RunLock(out).acquire() if dist_util.is_main_process() else None
    if lock is not None:
        tidy(out)
    try:
        return _train_locked(opts, out, resume, overrides, on_step)
    finally:
        if lock is not None:
            lock.release()


def _save_failed(out: Path, target: Path, exc: OSError) -> OSError:
    """The one-line error for a save that could not be written: what failed and the newest complete
    save, which a later ``--resume`` continues from."""
    newest = newest_complete_save(out)
    return OSError(
        exc.errno,
        f"could not write {target} ({exc.strerror or exc}); earlier saves are intact, "
        f"newest complete: {newest[0] if newest else 'none'}",
    )


def _train_locked(
    opts: TrainOptions, out: Path, resume: bool, overrides: dict | None, on_step: Callable[[int, Transformer], None] | None
) -> Path:
    if resume and not (out / "options.json").is_file():
        given = overrides or {}
        if has_saves(out) or not (given.get("train") and given.get("valid")):
            raise ValueError(
                f"{out}: no options.json, nothing to resume (a run stopped before it wrote one starts "
                "again with its original command, with or without --resume)"
            )
        # killed before options.json was written: nothing was trained yet, so the original
        # command given with --resume starts the run as it would have started
        log.warning("%s: no options.json (the run stopped before its first write): starting it with the options given", out)
        opts, resume = TrainOptions(**{**given, "out": str(out)}), False
    if resume:
        opts = TrainOptions(**resume_options(json.loads((out / "options.json").read_text()), overrides or {}))
    elif has_saves(out):
        raise ValueError(f"{out} already holds a run's saves: continue it with --resume, or choose a new --out")
    if opts.threads:
        torch.set_num_threads(opts.threads)
    ctx = dist_util.setup(opts.device, opts.dist_timeout)
    ctx.barrier()  # every rank has read options.json before rank 0 rewrites it
    if ctx.is_main:
        write_text_atomic(out / "options.json", json.dumps(asdict(opts), indent=1))
    device = ctx.device
    torch.manual_seed(opts.seed)
    train_pairs, counts = _load_sets(opts.train, opts.reverse)
    valid_pairs, valid_counts = _load_sets(opts.valid, opts.reverse)
    if opts.precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {opts.precision!r}")
    init = load_checkpoint(opts.init_from, device="cpu") if opts.init_from else None
    if init is not None:
        src_tok, tgt_tok = init.src_tokenizer, init.tgt_tokenizer
        config = init.config
        for k in ("dropout", "attention_dropout", "activation_dropout"):  # regularization may change
            setattr(config, k, getattr(opts, k))
        config.validate()
    else:
        src_tok, tgt_tok = run_tokenizers(opts, out, train_pairs, ctx)
        config = ModelConfig(
            src_vocab_size=src_tok.vocab_size,
            tgt_vocab_size=tgt_tok.vocab_size,
            d_model=opts.d_model,
            n_heads=opts.n_heads,
            n_encoder_layers=opts.encoder_layers or opts.layers,
            n_decoder_layers=opts.decoder_layers or opts.layers,
            d_ff=opts.d_ff,
            dropout=opts.dropout,
            max_len=opts.max_len,
            positional=opts.positional,
            share_src_tgt_embed=opts.joint_vocab > 0,
            norm_first=opts.norm_first,
            attention_dropout=opts.attention_dropout,
            activation_dropout=opts.activation_dropout,
        )
    c = config
    examples = encode_pairs(train_pairs, src_tok, tgt_tok, c.max_len, c.eos_id, c.bos_id)
    valid = encode_pairs(valid_pairs, src_tok, tgt_tok, c.max_len, c.eos_id, c.bos_id)
    check_fits_memory(config)  # a host limit: before the model is built
    model = Transformer(config)
    if init is not None:
        model.load_state_dict(init.model.state_dict())
        log.info("warm start from %s (fresh optimizer, %d warm-up steps)", opts.init_from, opts.warmup)
    model.to(device)
    if ctx.rank:  # distinct dropout per rank (rank 0 keeps the single-process stream)
        torch.manual_seed(opts.seed * 1_000_003 + ctx.rank)
    opt = make_optimizer(model)
    meta: dict[str, Any] = {"step": 0, "epoch": 0, "batch_in_epoch": 0, "wall_s": 0.0, "tokens": 0, "history": []}
    save = newest_complete_save(out) if resume else None
    if save is not None:
        weights_dir, state_dir = save
        model.load_state_dict(load_checkpoint(weights_dir, device="cpu").model.state_dict())
        model.to(device)
        meta = load_train_state(state_dir, opt, device, ctx)
        if ctx.is_main:
            trim_log(out, meta["step"])
            if step_dirs(out) and step_dirs(out)[-1] == weights_dir:
                prune(out, opts.keep)  # a run killed during its last prune kept one save too many
        log.info(
            "resumed from %s: step %d (epoch %d, batch %d)", weights_dir, meta["step"], meta["epoch"], meta["batch_in_epoch"]
        )
        if meta["step"] >= opts.max_steps:
            log.info("the run already finished at step %d (max_steps %d): nothing to train", meta["step"], opts.max_steps)
            ctx.close()
            return weights_dir
    elif resume:
        log.warning("%s: no complete save to resume from; starting at step 0", out)
        if ctx.is_main:
            trim_log(out, 0)
    meta.update(world_size=ctx.world_size, backend=ctx.backend, seed=opts.seed)
    net = ctx.wrap(model)  # DDP under torchrun (averages gradients), else the model itself
    model.train()
    use_amp = opts.precision == "bf16"
    if use_amp and device.type == "cpu" and not cpu_bf16_native():
        log.warning(
            "--precision bf16 on a CPU without AVX512-BF16 or AMX (%s): PyTorch emulates bf16 "
            "here, many times slower than fp32; consider --precision fp32",
            cpu_capability(),
        )
    chrf_sources = [s for s, _ in valid_pairs[: opts.chrf_lines]]
    chrf_refs = [t for _, t in valid_pairs[: opts.chrf_lines]]
    log.info("%d training pairs (%s), %d valid, %s parameters", len(examples), counts, len(valid), model.num_parameters())
    started = time.time() - meta["wall_s"]
    bar = tqdm(total=opts.max_steps, initial=meta["step"], dynamic_ncols=True, mininterval=5, disable=not ctx.is_main)
    step, epoch, pos = meta["step"], meta["epoch"], meta["batch_in_epoch"]
    window_tokens, window_t = 0, time.time()
    last_loss = float("nan")

    last_save = out / f"step_{step}"

    def checkpoint() -> None:
        """One complete save ``OUT/step_N`` (weights, tokenizers, card, optimizer, RNG, meta; one
        rename makes it visible), then pruning of the oldest beyond ``keep``."""
        nonlocal last_save
        meta.update(step=step, epoch=epoch, batch_in_epoch=pos, wall_s=time.time() - started)
        rng = ctx.rng_tensors() if ctx.distributed else None  # collective: every rank's RNG
        if not ctx.is_main:
            return
        card = model_card(opts, counts, valid_counts, meta, model)
        target = out / f"step_{step}"
        try:
            with atomic_dir(target) as tmp:
                write_checkpoint_files(tmp, model, src_tok, tgt_tok, card, name=target.name)
                save_train_state(tmp, opt, meta, rng)
        except OSError as exc:  # a full disk: one clear error; the earlier saves are untouched
            bar.close()
            raise _save_failed(out, target, exc) from exc
        last_save = target
        prune(out, opts.keep)

    done = False
    while not done:
        batches = make_batches(examples, opts.max_tokens, seed=opts.seed * 100003 + epoch)
        while pos < len(batches):
            mine = ctx.shard(batches[pos]) or batches[pos][:1]  # an empty shard computes a 0-weighted stand-in
            src, tgt = (t.to(device) for t in collate(examples, mine, c.pad_id))
            pos += 1
            step += 1
            lr = learning_rate(step, c.d_model, opts.warmup, opts.lr_scale, opts.max_steps, opts.cooldown)
            set_learning_rate(opt, lr)
            loss, n_tok = forward_loss(net, src, tgt, c.pad_id, opts.label_smoothing, use_amp)
            if ctx.distributed:  # weight by token share: gradient of the global batch's token mean
                n_local = n_tok if ctx.shard(batches[pos - 1]) else 0
                n_tok = sum(len(examples[i][1]) - 1 for i in batches[pos - 1])
                loss, reported = dist_util.shard_loss(ctx, loss, n_local, n_tok)
            apply_update(model, opt, loss, opts.clip)
            meta["tokens"] += n_tok
            window_tokens += n_tok
            last_loss = reported if ctx.distributed else float(loss.detach())
            if on_step is not None:
                on_step(step, model)
            bar.update(1)
            if step % 20 == 0:
                rate = window_tokens / max(time.time() - window_t, 1e-9)
                extra = {}
                if opts.max_minutes:  # tqdm's ETA is for max_steps; this one is for the time budget
                    extra["time_left"] = f"{max(0.0, opts.max_minutes - (time.time() - started) / 60):.0f}m"
                bar.set_postfix(loss=f"{last_loss:.3f}", lr=f"{lr:.2e}", tok_s=f"{rate:.0f}", epoch=epoch, **extra)
                window_tokens, window_t = 0, time.time()
            out_of_time = bool(opts.max_minutes) and (time.time() - started) / 60 >= opts.max_minutes
            if ctx.distributed and opts.max_minutes:
                out_of_time = ctx.any(out_of_time)  # all ranks stop at the same step
            if step % opts.valid_every == 0 or step == opts.max_steps or out_of_time:
                vl = evaluate_loss(model, valid, opts.max_tokens, device, ctx)
                if ctx.is_main:  # rank 0 alone scores chrF and writes the log
                    entry = {"step": step, "train_loss": last_loss, "valid_nll": vl, "wall_s": time.time() - started}
                    if chrf_sources:
                        entry["valid_chrf"] = valid_chrf(model, src_tok, tgt_tok, chrf_sources, chrf_refs)
                        if entry["valid_chrf"] > meta.get("best_chrf", -1.0):
                            at_best = {
                                **meta,
                                "best_chrf": entry["valid_chrf"],
                                "best_step": step,
                                "step": step,
                                "wall_s": entry["wall_s"],
                            }
                            card = model_card(opts, counts, valid_counts, at_best, model)
                            try:
                                save_checkpoint(out / "best", model, src_tok, tgt_tok, card)
                            except OSError as exc:  # a full disk: the previous best/ stays whole
                                bar.close()
                                raise _save_failed(out, out / "best", exc) from exc
                            meta["best_chrf"], meta["best_step"] = entry["valid_chrf"], step
                    meta["history"].append(entry)
                    log.info("step %d train %.3f valid_nll %.3f valid_chrf %s", step, last_loss, vl, entry.get("valid_chrf", "-"))
                    try:
                        with open(out / "log.jsonl", "a") as f:
                            f.write(json.dumps(entry) + "\n")
                    except OSError as exc:  # a full disk: say which file (trim_log drops a cut line on resume)
                        bar.close()
                        raise _save_failed(out, out / "log.jsonl", exc) from exc
            if step % opts.save_every == 0 or step >= opts.max_steps or out_of_time:
                checkpoint()
            if step >= opts.max_steps or out_of_time:
                done = True
                break
        else:
            epoch += 1
            pos = 0
    bar.close()
    # the DDP wrapper and its gradient reducer go while the process group still exists: freed after
    # destroy_process_group, the reducer's gloo group hung in its destructor (the next run's
    # rendezvous then waited forever for this rank)
    del net
    gc.collect()
    ctx.close()
    return last_save


def run_from_args(args) -> int:
    """Entry point of ``python -m core train`` (and of each process under ``torchrun -m core train``)."""
    fields = TrainOptions.__dataclass_fields__
    values = {k: getattr(args, k) for k in fields if k != "extra" and getattr(args, k, None) is not None}
    if not args.resume and (not values.get("train") or not values.get("valid")):
        raise SystemExit("train: --train and --valid are required (unless --resume)")
    try:
        if args.resume:
            last = train(TrainOptions(train=[], valid=[], out=args.out), resume=True, overrides=values)
        else:
            last = train(TrainOptions(**values))
    except RuntimeError as exc:  # a collective inside DDP's backward: say which rank and why, in one line
        err = dist_util.explain(exc)
        if err is exc:
            raise
        raise err from exc
    if dist_util.is_main_process():
        print(f"checkpoint: {last}")
    return 0


def add_arguments(p) -> None:
    d = TrainOptions(train=[], valid=[], out="")
    p.add_argument("--train", nargs="+", help="PREFIX[*W]: files PREFIX.ko/PREFIX.en, repeated W times")
    p.add_argument("--valid", nargs="+", help="PREFIX: validation pairs")
    p.add_argument("--out", required=True, help="run directory (checkpoints, logs, resume state)")
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --out from its newest complete save (options given must equal the saved ones, "
        "except the budget: --max-steps, --max-minutes, --threads, --device, --keep)",
    )
    p.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        help=f"padded tokens per optimizer step, default {d.max_tokens}; under torchrun the global batch, "
        "split over all processes (same value = same training, faster)",
    )
    p.add_argument(
        "--dist-timeout",
        type=float,
        default=None,
        help=f"torchrun only: seconds a process waits for the others before stopping with an error "
        f"(default {d.dist_timeout:.0f}; must exceed rank 0's chrF validation and checkpoint time)",
    )
    for name in (
        "src_vocab",
        "tgt_vocab",
        "d_model",
        "n_heads",
        "layers",
        "encoder_layers",
        "decoder_layers",
        "d_ff",
        "max_len",
        "max_steps",
        "warmup",
        "seed",
        "threads",
        "valid_every",
        "save_every",
        "keep",
        "joint_vocab",
        "chrf_lines",
    ):
        p.add_argument("--" + name.replace("_", "-"), type=int, default=None, help=f"default {getattr(d, name)}")
    for name in ("dropout", "max_minutes", "lr_scale", "label_smoothing", "clip", "attention_dropout", "activation_dropout"):
        p.add_argument("--" + name.replace("_", "-"), type=float, default=None, help=f"default {getattr(d, name)}")
    p.add_argument(
        "--cooldown",
        type=int,
        default=None,
        help="over the last N updates before --max-steps the learning rate falls linearly to 0 (default 0: "
        "no cool-down); may be added with --resume to finish a run",
    )
    p.add_argument("--positional", choices=["sinusoidal", "learned"], default=None)
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default=None)
    p.add_argument(
        "--precision",
        choices=list(PRECISIONS),
        default=None,
        help="bf16: autocast forward pass, fp32 master weights and loss (default fp32)",
    )
    p.add_argument(
        "--norm-first",
        action="store_const",
        const=True,
        default=None,
        help="pre-LN layers (Nguyen & Salazar 2019) instead of the paper's post-LN",
    )
    p.add_argument(
        "--reverse",
        action="store_const",
        const=True,
        default=None,
        help="train English→Korean on the same files (for back-translation)",
    )
    p.add_argument("--init-from", default=None, help="warm-start from this checkpoint (fresh optimizer and warm-up)")
