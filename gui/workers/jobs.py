"""One job system for everything the GUI sends to a worker thread: the main translation and its
live commands, the Ablate heads and Compare runs, and the tabs' ``compute`` jobs.

Every queue (:data:`TRANSLATE`, :data:`ABLATE`, :data:`COMPARE`, a tab's :func:`compute_queue` …)
numbers its jobs 1, 2, 3 … A job is cancelled when its queue is cancelled up to or past its id, or
when the board shuts down. An answer is stale unless its id is the newest of its queue
(:meth:`JobBoard.is_current`). Thread-safe, no Qt.

Every worker runs its jobs through one envelope, :func:`run_job`: a job cancelled (or, where
asked, superseded) while it waited never runs; a running one stops at its next check
(:meth:`Job.check`, the ``should_stop`` callback core's decoding polls at every step, raises
:class:`Cancelled`; :meth:`Job.cancelled` is the plain predicate); errors become one-line reasons.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from core.errors import StudioError

T = TypeVar("T")


class Queue(str):
    """A job queue's name. A ``str`` (it is printed and compared as text), typed so a queue is
    never a bare literal: the fixed queues are the constants below, a tab's is :func:`compute_queue`."""

    __slots__ = ()


TRANSLATE = Queue("translate")  # the main translation and its live commands (one model user at a time)
ABLATE = Queue("ablate")  # the Interventions tab (gui.workers.analysis_worker)
COMPARE = Queue("compare")  # the Side by side tab


def compute_queue(panel: str) -> Queue:
    """The queue of tab ``panel``'s ``compute`` jobs (``"compute:<panel>"``)."""
    return Queue(f"compute:{panel}")


class Cancelled(Exception):
    """Raised inside a worker when the job it runs was cancelled (Cancel, a newer job, closing)."""


class JobBoard:
    """Job ids, cancellation and staleness per queue (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._latest: dict[str, int] = {}  # by queue name
        self._cancelled_up_to: dict[str, int] = {}
        self._closing = threading.Event()

    def start(self, queue: Queue, supersede: bool = True) -> int:
        """A new job id for ``queue``. ``supersede``: cancel every older job of the queue (running
        or waiting); False keeps them (live commands run one after the other)."""
        with self._lock:
            job = self._latest.get(queue, 0) + 1
            self._latest[queue] = job
            if supersede:
                self._cancelled_up_to[queue] = max(self._cancelled_up_to.get(queue, 0), job - 1)
            return job

    def cancel(self, queue: Queue, up_to: int | None = None) -> None:
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

    def is_cancelled(self, queue: Queue, job: int) -> bool:
        """True if job ``job`` of ``queue`` was cancelled or the board shut down."""
        with self._lock:
            return self._closing.is_set() or job <= self._cancelled_up_to.get(queue, 0)

    def is_current(self, queue: Queue, job: int) -> bool:
        """True if ``job`` is the newest job of ``queue`` (an answer to any other is stale)."""
        with self._lock:
            return job == self._latest.get(queue, 0)

    def latest(self, queue: Queue) -> int:
        """The newest job id of ``queue`` (0 before the first)."""
        with self._lock:
            return self._latest.get(queue, 0)

    def stopper(self, queue: Queue, job: int) -> Callable[[], None]:
        """``should_stop()`` for the code running ``job``: raises :class:`Cancelled` once the job
        is cancelled; decoding calls it at every decoder step."""

        return Job(self, queue, job).check


@dataclass(frozen=True)
class Job(Generic[T]):
    """Job ``id`` of ``queue`` on ``board``, as the code running it sees it."""

    board: JobBoard
    queue: Queue
    id: int

    def cancelled(self) -> bool:
        """True once the job was cancelled (Cancel, a newer job of a superseding queue, closing)."""
        return self.board.is_cancelled(self.queue, self.id)

    def superseded(self) -> bool:
        """True when a newer job of the queue exists (this one's answer would be stale)."""
        return self.id < self.board.latest(self.queue)

    def check(self) -> None:
        """The ``should_stop`` callback handed to core (polled at every decoder step).

        Raises:
            Cancelled: the job was cancelled."""
        if self.cancelled():
            raise Cancelled


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """How a job ended. ``ran``: False when it never started (cancelled or superseded while it
    waited). ``cancelled``: stopped by a cancel, before or while running. ``reason``: the one-line
    error when it failed, else None. ``value``: what the work returned (None unless it succeeded).
    ``ms``: wall time of the work in milliseconds (0 when it did not run)."""

    value: T | None = None
    reason: str | None = None
    cancelled: bool = False
    ran: bool = True
    ms: float = 0.0

    @property
    def ok(self) -> bool:
        """The work ran to the end and returned ``value``."""
        return self.ran and not self.cancelled and self.reason is None


def run_job(job: Job, work: Callable[[Job], T], skip_superseded: bool = False) -> Outcome[T]:
    """The one job envelope of every worker: run ``work(job)`` unless the job was cancelled while
    it waited (``Outcome(cancelled=True, ran=False)``) or, with ``skip_superseded``, a newer job of
    its queue exists (``Outcome(ran=False)``: nobody waits for its answer). ``Cancelled`` raised by
    the work gives a cancelled outcome; :class:`~core.errors.StudioError` and ``ValueError`` give
    their message as ``reason``, any other exception "unexpected error: <type>: <message>" (the
    app reports it in one line and keeps running). Never raises (except BaseException such as
    KeyboardInterrupt)."""
    if skip_superseded and job.superseded():
        return Outcome(ran=False)
    if job.cancelled():
        return Outcome(cancelled=True, ran=False)
    t0 = time.perf_counter()
    try:
        value = work(job)
    except Cancelled:
        return Outcome(cancelled=True, ms=(time.perf_counter() - t0) * 1000.0)
    except (StudioError, ValueError) as exc:
        return Outcome(reason=str(exc), ms=(time.perf_counter() - t0) * 1000.0)
    except Exception as exc:
        return Outcome(reason=f"unexpected error: {type(exc).__name__}: {exc}", ms=(time.perf_counter() - t0) * 1000.0)
    return Outcome(value=value, ms=(time.perf_counter() - t0) * 1000.0)


__all__ = ["ABLATE", "COMPARE", "TRANSLATE", "Cancelled", "Job", "JobBoard", "Outcome", "Queue", "compute_queue", "run_job"]
