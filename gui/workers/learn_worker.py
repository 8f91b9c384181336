"""Live training of a toy task off the GUI thread (the "Learn" tab).

:class:`LearnWorker` owns one :class:`core.training.live_session.LiveSession` and lives on its own
QThread (the tab starts it through :class:`gui.workers.threads.WorkerThread`), so translations and
the GUI go on while it trains. Every request is a job of the queue ``"learn"`` on the app's
:class:`gui.workers.jobs.JobBoard`; a newer job, :meth:`JobBoard.cancel` (Pause, Cancel) or the
board's shutdown (closing the window) stops a running training before its next update. The
session is only ever touched on this thread; what crosses to the GUI are the session's immutable
:class:`Snapshot` records (numpy maps) and plain numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6 import QtCore

from core.training.live_session import LiveSession, LiveSettings, Snapshot
from gui.workers.jobs import Job, JobBoard, Queue, run_job

LEARN = Queue("learn")


@dataclass(frozen=True)
class LearnSpec:
    """A run to build: ``task`` (copy, reverse, sort, numbers, file), ``path`` (the TSV for
    ``file``), :class:`LiveSettings` and ``seed``."""

    task: str
    settings: LiveSettings = field(default_factory=LiveSettings)
    seed: int = 0
    path: str | None = None


class LearnWorker(QtCore.QObject):
    """Slots (queued, run on this worker's thread, each through :func:`gui.workers.jobs.run_job`):
    ``build(job, LearnSpec)``, ``train(job, every, until)``, ``step(job)``.

    Signals: ``built(job, str description, Snapshot)`` (a new run at update 0, its first snapshot),
    ``snapshot(job, Snapshot)`` (after each chunk of updates or a single step),
    ``stopped(job, str why)`` (a training job ended: "until" reached, "paused", "failed", or "not
    run": cancelled before it began, no run, or its build failed), ``failed(job, str reason)`` (one
    line; the previous run, if any, is kept unchanged)."""

    built = QtCore.Signal(int, str, object)
    snapshot = QtCore.Signal(int, object)
    stopped = QtCore.Signal(int, str)
    failed = QtCore.Signal(int, str)

    def __init__(self, jobs: JobBoard) -> None:
        super().__init__()
        self.jobs = jobs
        self.session: LiveSession | None = None
        self.failed_build = 0  # the id of the last build that failed (its follow-up job is dropped)

    def _job(self, job: int) -> Job:
        return Job(self.jobs, LEARN, job)

    def _runnable(self, job: int) -> bool:
        """A session exists and the job does not follow a build that failed (Train sends a build
        and then its training as consecutive jobs: never train the old run instead)."""
        return self.session is not None and self.failed_build != job - 1

    def _fail(self, job: int, reason: str) -> None:
        self.failed.emit(job, reason.splitlines()[0] if reason else "failed")

    @QtCore.Slot(int, object)
    def build(self, job: int, spec: LearnSpec) -> None:
        """A new run from ``spec`` (update 0, evaluated once). Bad settings or task file:
        ``failed`` with the reason, the current run stays."""

        def work(_job: Job) -> tuple[LiveSession, Snapshot]:
            session = LiveSession(spec.task, spec.settings, seed=spec.seed, path=spec.path)
            return session, session.snapshot()

        out = run_job(self._job(job), work)
        if out.reason is not None:
            self.failed_build = job
            self._fail(job, out.reason)
        elif out.ok:
            self.session = out.value[0]
            self.built.emit(job, self.session.task.description, out.value[1])

    @QtCore.Slot(int, int, int)
    def train(self, job: int, every: int, until: int) -> None:
        """Train in chunks of ``every`` updates up to update ``until``, evaluating and emitting a
        snapshot after each chunk, until the job is cancelled (then the updates made so far are
        evaluated too, unless the window is closing) or ``until`` is reached."""
        if not self._runnable(job):
            self.stopped.emit(job, "not run")
            return
        s = self.session

        def work(j: Job) -> str:
            while s.updates < until and not j.cancelled():
                before = s.updates
                s.step(min(every, until - s.updates), should_stop=j.cancelled)
                if self.jobs.closed:
                    return "closing"  # no evaluation: the thread ends at once
                if s.updates > before:
                    self.snapshot.emit(job, s.snapshot())
            return "until" if s.updates >= until else "paused"

        out = run_job(self._job(job), work)
        if out.reason is not None:
            self._fail(job, out.reason)
        if not self.jobs.closed:
            self.stopped.emit(job, out.value if out.ok else "failed" if out.reason else "not run")

    @QtCore.Slot(int)
    def step(self, job: int) -> None:
        """One update, then a snapshot."""
        if not self._runnable(job):
            return
        s = self.session

        def work(_job: Job) -> None:
            s.step(1)
            self.snapshot.emit(job, s.snapshot())

        out = run_job(self._job(job), work)
        if out.reason is not None:
            self._fail(job, out.reason)


__all__ = ["LEARN", "LearnSpec", "LearnWorker"]
