"""One job system for everything the GUI sends to a worker thread: the main translation and its
live commands, the Ablate heads and Compare runs, and the tabs' ``compute`` jobs.

Every queue (``"translate"``, ``"ablate"``, ``"compare"``, ``"compute:inside"`` …) numbers its jobs
1, 2, 3 … A job is cancelled when its queue is cancelled up to or past its id, or when the board
shuts down; a waiting job that is cancelled never runs, a running one stops at its next
``should_stop()`` check (:meth:`JobBoard.stopper`, which raises :class:`Cancelled`). An answer is
stale unless its id is the newest of its queue (:meth:`JobBoard.is_current`). Thread-safe, no Qt.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class Cancelled(Exception):
    """Raised inside a worker when the job it runs was cancelled (Cancel, a newer job, closing)."""


class JobBoard:
    """Job ids, cancellation and staleness per queue (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._latest: dict[str, int] = {}
        self._cancelled_up_to: dict[str, int] = {}
        self._closing = threading.Event()

    def start(self, queue: str, supersede: bool = True) -> int:
        """A new job id for ``queue``. ``supersede``: cancel every older job of the queue (running
        or waiting); False keeps them (live commands run one after the other)."""
        with self._lock:
            job = self._latest.get(queue, 0) + 1
            self._latest[queue] = job
            if supersede:
                self._cancelled_up_to[queue] = max(self._cancelled_up_to.get(queue, 0), job - 1)
            return job

    def cancel(self, queue: str, up_to: int | None = None) -> None:
        """Cancel the jobs of ``queue`` with id <= ``up_to`` (default: all so far). Ids only grow,
        so a lower ``up_to`` than an earlier call changes nothing."""
        with self._lock:
            limit = self._latest.get(queue, 0) if up_to is None else up_to
            self._cancelled_up_to[queue] = max(self._cancelled_up_to.get(queue, 0), limit)

    def shutdown(self) -> None:
        """Cancel every job of every queue, now and later (the window is closing)."""
        self._closing.set()

    @property
    def closed(self) -> bool:
        """True once :meth:`shutdown` was called."""
        return self._closing.is_set()

    def is_cancelled(self, queue: str, job: int) -> bool:
        """True if job ``job`` of ``queue`` was cancelled or the board shut down."""
        with self._lock:
            return self._closing.is_set() or job <= self._cancelled_up_to.get(queue, 0)

    def is_current(self, queue: str, job: int) -> bool:
        """True if ``job`` is the newest job of ``queue`` (an answer to any other is stale)."""
        with self._lock:
            return job == self._latest.get(queue, 0)

    def latest(self, queue: str) -> int:
        """The newest job id of ``queue`` (0 before the first)."""
        with self._lock:
            return self._latest.get(queue, 0)

    def stopper(self, queue: str, job: int) -> Callable[[], None]:
        """``should_stop()`` for the code running ``job``: raises :class:`Cancelled` once the job
        is cancelled; decoding calls it at every decoder step."""

        def should_stop() -> None:
            if self.is_cancelled(queue, job):
                raise Cancelled

        return should_stop


__all__ = ["Cancelled", "JobBoard"]
