"""The benchmark's interleaved timing: one warm-up call each, then the functions take turns per round,
each round starting one function later."""

from __future__ import annotations

from bench.timing import round_times


def test_round_times_takes_turns_rotating_and_keeps_each_rounds_times():
    calls: list[str] = []
    fns = [lambda: calls.append("a"), lambda: calls.append("b"), lambda: calls.append("c")]
    times = round_times(fns, 4)
    assert calls == ["a", "b", "c"] + ["a", "b", "c", "b", "c", "a", "c", "a", "b", "a", "b", "c"]  # warm-ups, 4 rounds
    assert len(times) == 3 and all(len(t) == 4 for t in times)
    assert all(t >= 0.0 for row in times for t in row)
