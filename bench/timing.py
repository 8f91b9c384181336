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
