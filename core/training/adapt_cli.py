"""``python -m core adapt``: adapt a checkpoint to the pairs of a TSV file and save a new model
(see :mod:`core.training.adapt`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.locations import user_models_dir
from core.training.adapt import adapt
from core.training.adapt_options import HOLD_GENERAL, HOLD_STEPS, MAX_STEPS, AdaptOptions
from core.training.pairs_file import read_pairs


def add_arguments(p) -> None:
    """The arguments of ``python -m core adapt``: the model, the pairs, the output and every adapting option."""
    p.add_argument("--checkpoint", required=True, help="the model to adapt (a folder, or a shipped or your own model's name)")
    p.add_argument("--pairs", required=True, help="Korean<TAB>English pairs, one per line (# lines are comments)")
    p.add_argument("--name", required=True, help="the new model's name (in its card)")
    p.add_argument(
        "--out",
        default=None,
        help=f"new checkpoint folder (must not exist or be empty); default: your model folder ({user_models_dir()}/NAME)",
    )
    add_option_arguments(p)
    p.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's)")
    p.add_argument("--force", action="store_true", help="replace --out when it is an existing checkpoint folder")


def _flag(key: str, value) -> str:
    name = key.replace("_", "-")
    return f"--{'' if value else 'no-'}{name}" if isinstance(value, bool) else f"--{name} {value:g}"


def add_option_arguments(p, hold_general: bool = True) -> None:
    """The arguments that make an :class:`AdaptOptions` (read back by :func:`options_from_args`);
    shared by ``python -m core adapt`` (``hold_general`` True: the recipe of :data:`HOLD_GENERAL`
    unless ``--no-hold-general``) and ``python -m bench.adapt`` (False: the options as given). The
    recipe's options given on the command line keep the value given."""
    d = AdaptOptions()
    recipe = " ".join(_flag(k, v) for k, v in HOLD_GENERAL.items())
    p.add_argument(
        "--hold-general",
        action=argparse.BooleanOptionalAction,
        default=hold_general,
        help=f"the recipe that keeps general translations, as the Adapt tab's default: {recipe}, at most "
        f"{HOLD_STEPS} updates, for each of those options not given (default: {'on' if hold_general else 'off'})",
    )
    p.add_argument(
        "--steps", type=int, default=None, help=f"updates, 1 to {MAX_STEPS} (default {d.steps}; {HOLD_STEPS} with --hold-general)"
    )
    p.add_argument("--lr-scale", type=float, default=None, help=f"schedule scale (default {d.lr_scale})")
    p.add_argument("--warmup", type=int, default=d.warmup, help=f"warm-up updates (default {d.warmup})")
    p.add_argument(
        "--replay",
        type=float,
        default=d.replay,
        help=f"replay pairs of the checkpoint's replay.tsv mixed in per pair (default {d.replay:g}; 0 = none)",
    )
    p.add_argument(
        "--base-weight",
        type=float,
        default=None,
        help="mix the base back in: weights = (1 - w) adapted + w base (default 0)",
    )
    p.add_argument("--freeze-embeddings", action="store_true", help="keep the token embeddings and output projection")
    p.add_argument(
        "--replay-own",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="replay the checkpoint's own translations of the replay sources (default off)",
    )
    p.add_argument(
        "--distill",
        type=float,
        default=None,
        help=f"weight of a KL term to the base model's token distributions on the replay pairs (default {d.distill:g} = off)",
    )
    p.add_argument(
        "--low-rank",
        type=int,
        default=d.low_rank,
        help=f"train only rank-R adapters of the --low-rank-modules linears, merged when saved (default {d.low_rank} = off)",
    )
    p.add_argument("--low-rank-modules", default=d.low_rank_modules, help=f"comma-separated globs (default {d.low_rank_modules})")
    p.add_argument("--train-only", default=d.train_only, help="comma-separated globs of the parameters that train (default all)")
    p.add_argument(
        "--stop-when-learned",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="stop as soon as every pair comes out within one word of its reference (checked every 5 updates; default off)",
    )
    p.add_argument(
        "--moments",
        default=d.moments,
        help="continue the Adam of the checkpoint's training run: auto (default: the checkpoint's "
        "adam_moments.safetensors when it ships one, else a fresh Adam), a training step folder "
        "(train_state.safetensors) or an adam_moments.safetensors, or none (a fresh Adam)",
    )
    p.add_argument(
        "--dropout",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="train with the model's dropout (default); --no-dropout trains the model as it translates",
    )
    p.add_argument("--moments-exp-avg", action="store_true", help="with --moments: continue the first moment too")
    p.add_argument("--seed", type=int, default=d.seed)


def options_from_args(args) -> AdaptOptions:
    """The :class:`AdaptOptions` of arguments added by :func:`add_option_arguments` (``threads``
    from ``args.threads`` when present). Each option of :data:`HOLD_GENERAL` not given takes the
    recipe's value with ``--hold-general``, else its plain default."""
    hold = bool(getattr(args, "hold_general", False))
    plain = AdaptOptions()

    def pick(key: str):
        given = getattr(args, key)
        if given is not None:
            return given
        return HOLD_GENERAL[key] if hold and key in HOLD_GENERAL else getattr(plain, key)

    return AdaptOptions(
        steps=args.steps if args.steps is not None else (HOLD_STEPS if hold else plain.steps),
        warmup=args.warmup,
        lr_scale=pick("lr_scale"),
        replay=args.replay,
        seed=args.seed,
        threads=getattr(args, "threads", 0),
        base_weight=pick("base_weight"),
        train_embeddings=not args.freeze_embeddings,
        replay_own=pick("replay_own"),
        distill=pick("distill"),
        low_rank=args.low_rank,
        low_rank_modules=args.low_rank_modules,
        train_only=args.train_only,
        stop_when_learned=pick("stop_when_learned"),
        moments=args.moments,
        moments_exp_avg=args.moments_exp_avg,
        dropout=pick("dropout"),
    )


def run_from_args(args) -> int:
    """Entry point of ``python -m core adapt``; errors propagate to the CLI's one-line handler."""
    pairs = read_pairs(args.pairs)
    opts = options_from_args(args)
    out = Path(args.out) if args.out else user_models_dir() / args.name

    def progress(done: int, total: int, loss: float) -> None:
        if done % 10 == 0 or done == total:
            print(f"update {done}/{total}: loss {loss:.3f} nats/token", file=sys.stderr, flush=True)

    r = adapt(args.checkpoint, pairs, out, args.name, opts, source=Path(args.pairs).name, progress=progress, force=args.force)
    early = (
        f" (stopped early: every pair within one word of its reference after {r.steps} of {opts.steps})"
        if r.steps < opts.steps
        else ""
    )
    print(f"adapted {Path(args.checkpoint).name} on {len(pairs)} pairs in {r.steps} updates{early} ({r.seconds:.0f} s): {r.path}")
    use = args.name if args.out is None else str(r.path)
    print(f'translate with it: python -m core translate --checkpoint {use} "…"', file=sys.stderr)
    return 0
