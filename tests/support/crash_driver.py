"""A tiny training run that dies like ``kill -9`` at a chosen point, for tests/integration/test_crash_safe.py.

    python -m tests.crash_driver OUT MAX_STEPS [--resume] [--die FUNCTION:N]

``--die write_checkpoint_files:2`` ends the process with ``os._exit(137)`` (no cleanup, no finally
blocks, as SIGKILL) on the 2nd call of that function inside a save. FUNCTION is one of the names in
``POINTS``; each is a step inside one save, in the order the save runs them.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

# where a save can be cut: (module, function) patched to die on its N-th call
POINTS = {
    "save_file": ("core.checkpoints.checkpoint", "save_file"),  # writing the weights
    "tokenizer_save": (None, None),  # writing a tokenizer (patched on the class below)
    "save_train_state": ("core.training.train", "save_train_state"),  # optimizer + RNG + meta
    "write_manifest": ("core.checkpoints.atomic_io", "write_manifest"),  # the last file of a save
    "os_replace": ("core.checkpoints.atomic_io.os", "replace"),  # the rename that publishes it
    "prune": ("core.training.train", "prune"),  # removing the oldest saves afterwards
}


def options(out: str, steps: int):
    from core.training.train import TrainOptions

    return TrainOptions(
        train=[f"{FIXTURES / 'tiny'}*2"],
        valid=[str(FIXTURES / "tiny")],
        out=out,
        src_vocab=120,
        tgt_vocab=100,
        d_model=32,
        n_heads=4,
        layers=2,
        d_ff=64,
        max_len=48,
        max_tokens=120,
        max_steps=steps,
        warmup=4,
        threads=1,
        valid_every=2,
        save_every=2,
        dropout=0.1,
        seed=7,
        keep=3,
        chrf_lines=4,
    )


def arm(point: str, nth: int) -> None:
    """Make the ``nth`` call of ``point`` end the process at once."""
    import importlib

    calls = {"n": 0}

    def wrap(fn):
        def dying(*a, **k):
            calls["n"] += 1
            if calls["n"] == nth:
                os._exit(137)
            return fn(*a, **k)

        return dying

    if point == "tokenizer_save":
        from core.tokenizers.bpe import TextTokenizer

        TextTokenizer.save = wrap(TextTokenizer.save)
        return
    module, name = POINTS[point]
    mod = importlib.import_module(module) if not module.endswith(".os") else importlib.import_module(module[:-3]).os
    if module.endswith(".os"):  # only the atomic_io module's view of os.replace
        import types

        fake = types.SimpleNamespace(**{k: getattr(os, k) for k in dir(os) if not k.startswith("__")})
        fake.replace = wrap(os.replace)
        importlib.import_module(module[:-3]).os = fake
        return
    setattr(mod, name, wrap(getattr(mod, name)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("steps", type=int)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--die", default=None)
    args = ap.parse_args(argv)
    if args.die:
        point, nth = args.die.split(":")
        arm(point, int(nth))
    from core.training.train import TrainOptions, train

    if args.resume:
        train(TrainOptions(train=[], valid=[], out=args.out), resume=True, overrides={"max_steps": args.steps})
    else:
        train(options(args.out, args.steps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
