"""Timing helper shared by the benchmarks."""

from __future__ import annotations

import statistics
import time


def median_time(fn, repeats: int) -> float:
    """Median wall time of ``fn()`` in seconds over ``repeats`` calls (one warm-up call first)."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def median_times(fns, repeats: int) -> list[float]:
    """Median wall time in seconds of each of ``fns`` over ``repeats`` rounds, the functions taking
    turns within a round (one warm-up call each first), so that a slower stretch of a shared machine
    falls on all of them alike and their ratios stay fair."""
    return [statistics.median(t) for t in round_times(fns, repeats)]


def round_times(fns, repeats: int) -> list[list[float]]:
    """Wall times in seconds of each of ``fns`` in each of ``repeats`` rounds (``[fn][round]``), the
    functions taking turns within a round after one warm-up call each, round r starting with function
    r mod n (no function always follows the same one): times from the same round were taken on the
    same state of a shared machine, so a ratio of two is best taken round by round."""
    for fn in fns:
        fn()
    n = len(fns)
    times: list[list[float]] = [[] for _ in fns]
    for r in range(repeats):
        for i in [(r + j) % n for j in range(n)]:
            t0 = time.perf_counter()
            fns[i]()
            times[i].append(time.perf_counter() - t0)
    return times
