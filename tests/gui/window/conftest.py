"""Fixtures shared by the window tests.

A long search is stood in for by :class:`SlowSearch`: requests of the beam sizes it holds poll
``should_stop`` (so Cancel stops them, as a real search) until ``release`` is set, then run the real start.
"""

from __future__ import annotations

import threading

import pytest

import gui.workers.model_worker


class SlowSearch:
    """The worker's start of a request; a request with a beam size in ``beams`` is held until ``release``."""

    def __init__(self, real, beams: set[int]) -> None:
        self.real, self.beams = real, beams
        self.started, self.release = threading.Event(), threading.Event()

    def __call__(self, ckpt, req, should_stop=None):
        if req.beam in self.beams:
            self.started.set()
            while not self.release.wait(0.005):
                if should_stop is not None:
                    should_stop()  # raises Cancelled once Cancel (or a newer request) dropped it
        return self.real(ckpt, req, should_stop)


@pytest.fixture
def slow_search(monkeypatch):
    made: list[SlowSearch] = []

    def make(*beams: int) -> SlowSearch:
        slow = SlowSearch(gui.workers.model_worker.start, set(beams))
        monkeypatch.setattr(gui.workers.model_worker, "start", slow)
        made.append(slow)
        return slow

    yield make
    for slow in made:
        slow.release.set()
