"""Live training of the toy tasks: wall time and the best cross-attention head's alignment.

For each task, from seed 0 with the default :class:`LiveSettings` (d_model 64, 4 heads, 2+2
layers, peak lr 3e-3), trains the task's preset number of updates, evaluating every 50 as the app
would (held-out loss, greedy accuracy, alignment, probe maps), and prints the wall time (s, the
evaluations included), the update at which the alignment first reached 95 % and the final
alignment (share of the held-out probe positions whose best-head row argmax is on the known
source position). The target is ≥ 95 % in under 60 s for copy, reverse and numbers.

    python -m bench.learn [--tasks copy reverse numbers sort] [--threads 1] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from core.training.live_session import LiveSession, LiveSettings
from core.training.toy_tasks import PRESET_UPDATES

UPDATES = {k: v for k, v in PRESET_UPDATES.items() if k != "file"}


def run_task(task: str, seed: int = 0, updates: int | None = None, every: int = 50) -> dict:
    """Train ``task`` for ``updates`` (default its preset) and return the measurements."""
    t0 = time.perf_counter()
    session = LiveSession(task, LiveSettings(), seed=seed)
    first_95 = None
    ev = session.evaluate()
    while session.updates < (updates or UPDATES[task]):
        session.step(every)
        ev = session.evaluate()
        if first_95 is None and ev.alignment is not None and ev.alignment >= 0.95:
            first_95 = (session.updates, time.perf_counter() - t0)
    return {
        "task": task,
        "updates": session.updates,
        "wall_s": round(time.perf_counter() - t0, 1),
        "alignment": None if ev.alignment is None else round(ev.alignment, 4),
        "best_head": ev.best_head,
        "first_95_update": None if first_95 is None else first_95[0],
        "first_95_s": None if first_95 is None else round(first_95[1], 1),
        "accuracy": round(ev.accuracy, 3),
        "heldout_nll": round(ev.heldout_nll, 4),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m bench.learn", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--tasks", nargs="+", default=["copy", "reverse", "numbers", "sort"], choices=sorted(UPDATES))
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1: on a busy CPU threads wait on each other)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"threads {torch.get_num_threads()}, seed {args.seed}")
    print(
        "| task | updates | wall s | first ≥95% (update, s) | alignment | best head (layer, head, from 1) "
        "| exact | held-out NLL |"
    )
    print("|---|---|---|---|---|---|---|---|")
    rows = []
    for task in args.tasks:
        r = run_task(task, args.seed)
        rows.append(r)
        first = "-" if r["first_95_update"] is None else f"{r['first_95_update']}, {r['first_95_s']}"
        head = "-" if r["best_head"] is None else f"{r['best_head'][0] + 1}, {r['best_head'][1] + 1}"
        cells = [task, r["updates"], r["wall_s"], first, r["alignment"], head, r["accuracy"], r["heldout_nll"]]
        print("| " + " | ".join(map(str, cells)) + " |", flush=True)
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
