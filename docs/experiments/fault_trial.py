"""Kill a tiny training run with SIGKILL at random moments, resume it, and compare with a run that was
never interrupted: how many trials end with the same weights, how many resume from a mix or a
damaged save, how many cannot resume at all. Runs any checkout of the project, so the same trial can
be measured on an older commit and on the current one.

    python docs/experiments/fault_trial.py --code . --trials 12 --seed 1
    git worktree add /tmp/old <commit>; python docs/experiments/fault_trial.py --code /tmp/old --trials 12
    python docs/experiments/fault_trial.py --code . --die-at core.training.train:save_train_state:2

``--die-at MODULE:FUNCTION:N`` ends the process (``os._exit(137)``, no cleanup, as SIGKILL) on the N-th
call of that function instead of at a random moment: a cut at an exact point of a save.

The training command and options are the same on every commit (``python -m core train`` with a tiny
model on tests/fixtures/tiny, 8 steps, a save every 2); the newest weights are found in ``step_8`` or,
on commits before step folders held the resume state, in ``last/``.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from safetensors.torch import load_file

OPTS = [
    "--src-vocab",
    "120",
    "--tgt-vocab",
    "100",
    "--d-model",
    "32",
    "--n-heads",
    "4",
    "--layers",
    "2",
    "--d-ff",
    "64",
    "--max-len",
    "48",
    "--max-tokens",
    "120",
    "--max-steps",
    "8",
    "--warmup",
    "4",
    "--threads",
    "1",
    "--valid-every",
    "2",
    "--save-every",
    "2",
    "--seed",
    "7",
    "--dropout",
    "0.1",
]


def command(code: Path, out: Path) -> list[str]:
    tiny = str(code / "tests" / "fixtures" / "tiny")
    return [sys.executable, "-m", "core", "train", "--train", f"{tiny}*2", "--valid", tiny, "--out", str(out), *OPTS]


DRIVER = """
import os, sys, importlib
mod, fn, nth = sys.argv[1].split(":")
m = importlib.import_module(mod)
real, calls = getattr(m, fn), [0]
def dying(*a, **k):
    calls[0] += 1
    if calls[0] == int(nth):
        os._exit(137)
    return real(*a, **k)
setattr(m, fn, dying)
from core.__main__ import main
sys.exit(main(sys.argv[2:]))
"""


def final_weights(out: Path) -> dict | None:
    for p in (out / "step_8" / "model.safetensors", out / "last" / "model.safetensors"):
        if p.is_file():
            return load_file(str(p))
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--code", type=Path, required=True, help="checkout whose core/ is run")
    ap.add_argument("--trials", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--die-at", default=None, help="MODULE:FUNCTION:N, a cut at an exact point instead of a random one")
    args = ap.parse_args()
    code = args.code.resolve()
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(code)}
    root = Path(tempfile.mkdtemp(prefix="fault-trial-"))
    ref = root / "ref"
    subprocess.run(command(code, ref), cwd=code, env=env, capture_output=True, check=True)
    want = final_weights(ref)
    rng = random.Random(args.seed)
    outcome = {"same weights": 0, "different weights": 0, "resume failed": 0}
    for t in range(args.trials):
        out = root / f"t{t}"
        if args.die_at:
            cmd = [sys.executable, "-c", DRIVER, args.die_at, *command(code, out)[3:]]
            subprocess.run(cmd, cwd=code, env=env, capture_output=True)
        else:
            proc = subprocess.Popen(command(code, out), cwd=code, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            while not (out / "options.json").exists() and proc.poll() is None:
                time.sleep(0.02)
            time.sleep(rng.uniform(0.0, 2.0))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        res = subprocess.run(
            [sys.executable, "-m", "core", "train", "--out", str(out), "--resume", "--max-steps", "8"],
            cwd=code,
            env=env,
            capture_output=True,
            text=True,
        )
        got = final_weights(out)
        if res.returncode != 0 or got is None:
            outcome["resume failed"] += 1
            print(f"trial {t}: resume failed: {(res.stderr.strip().splitlines() or ['?'])[-1][:120]}")
        elif all(torch.equal(want[k], got[k]) for k in want):
            outcome["same weights"] += 1
        else:
            diff = max(float((want[k] - got[k]).abs().max()) for k in want)
            outcome["different weights"] += 1
            print(f"trial {t}: resumed, but the final weights differ (max |diff| {diff:.3g})")
    how = f"cut at the {args.die_at}" if args.die_at else "SIGKILL at random moments"
    print(f"{code}: {args.trials} trials, {how}: " + ", ".join(f"{k} {v}" for k, v in outcome.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
