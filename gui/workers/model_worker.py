"""Model work off the GUI thread: a QObject living in a QThread, driven by queued signals.

The GUI never touches the model; it receives plain results (Checkpoint info, Translation).
Job ids, cancellation and stale answers follow one rule for every queue, the worker's
:class:`gui.workers.jobs.JobBoard` ``jobs``: the window numbers its translations and live commands
in the queue ``"translate"``, the Ablate heads / Compare tabs theirs in ``"ablate"`` / ``"compare"``
(:mod:`gui.workers.analysis_worker` checks the same board), the tabs' ``compute`` jobs in
``"compute:<panel>"``. A cancelled job that still waits is answered with ``cancelled`` without
running; a running one stops at its next decoder step. :meth:`ModelWorker.shutdown` cancels
everything, loads included, so closing the window never waits for queued work.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6 import QtCore

from core.checkpoints.checkpoint import Checkpoint, load_checkpoint
from core.decoding.live import LiveDecoder
from core.decoding.strategy import DecodingStrategy
from core.errors import InputError, StudioError
from gui.state.live_commands import run_command, start
from gui.workers.jobs import TRANSLATE, Cancelled, Job, JobBoard, Queue, run_job

__all__ = ["TRANSLATE", "Cancelled", "ModelWorker", "TranslateRequest"]


@dataclass
class TranslateRequest:
    """What to translate and how: ``strategy`` (greedy, beam or sampling,
    :class:`~core.decoding.strategy.DecodingStrategy`); pad_to None = no padding demo; reference =
    teacher forcing, with ``causal`` False for the mask-off demonstration; ``batch_with`` = a
    second sentence in the same padded batch; ``show_full``: compute the full output at once."""

    text: str
    strategy: DecodingStrategy = field(default_factory=DecodingStrategy.greedy)
    pad_to: int | None = None
    reference: str | None = None
    top_k: int = 5
    batch_with: str | None = None
    show_full: bool = False
    causal: bool = True

    @property
    def beam(self) -> int:
        """The strategy's beam size (1 for greedy and sampling), for the tools that take one."""
        return self.strategy.beam_size


class ModelWorker(QtCore.QObject):
    """Loads checkpoints and translates; every outcome is a signal.

    Signals:
        loaded(Checkpoint): a new model is active (the old one is dropped only now).
        load_failed(str): one-line reason; the previous model stays active.
        load_progress(str, float): what is being loaded and the fraction done (0..1).
        translated(int, LiveState, float): request id, state to show, milliseconds taken; sent
            for a new request and for each live command (:meth:`command`).
        failed(int, str): request id, one-line reason.
        cancelled(int): request id; also sent for a waiting request dropped before it ran.
        busy(bool): work started/finished.
        computed(str, int, object) / compute_failed(str, int, str): queue, job id and the
            answer to :meth:`compute` (value or one-line reason).

    ``jobs`` (:class:`gui.workers.jobs.JobBoard`, thread-safe) numbers and cancels every job.
    """

    loaded = QtCore.Signal(object)
    load_failed = QtCore.Signal(str)
    load_progress = QtCore.Signal(str, float)
    translated = QtCore.Signal(int, object, float)
    failed = QtCore.Signal(int, str)
    cancelled = QtCore.Signal(int)
    busy = QtCore.Signal(bool)
    computed = QtCore.Signal(str, int, object)  # compute(queue, job, fn): queue, job, fn(checkpoint)
    compute_failed = QtCore.Signal(str, int, str)  # queue, job, one-line reason

    def __init__(self) -> None:
        super().__init__()
        self.checkpoint: Checkpoint | None = None
        self.live: LiveDecoder | None = None  # the sentence being stepped (greedy or beam)
        self.jobs = JobBoard()

    def shutdown(self) -> None:
        """Thread-safe: drop all work, running and waiting (translations and loads), for good."""
        self.jobs.shutdown()

    @QtCore.Slot(str, str, str)
    def load(self, path: str, device: str, precision: str = "fp32") -> None:
        """Load ``path`` on ``device`` at ``precision`` ("fp32", "bf16", "int8", "int8-output": see
        :mod:`core.checkpoints.precision`); the previous model stays active if it fails."""
        if self.jobs.closed:
            return
        self.busy.emit(True)
        try:
            ckpt = load_checkpoint(path, device=device, progress=self.load_progress.emit, precision=precision)
        except (StudioError, ValueError, OSError) as exc:
            self.load_failed.emit(str(exc))
        except Exception as exc:
            self.load_failed.emit(f"{path}: unexpected error: {type(exc).__name__}: {exc}")
        else:
            self.checkpoint = ckpt
            self.loaded.emit(ckpt)
        finally:
            self.busy.emit(False)

    @QtCore.Slot(int, object)
    def translate(self, request_id: int, req: TranslateRequest) -> None:
        self._run(request_id, lambda job: self._start(req, job.check))

    @QtCore.Slot(int, str, object)
    def command(self, request_id: int, name: str, arg) -> None:
        """A live command on the current sentence (see :func:`gui.state.live_commands.run_command`):
        ``step`` runs exactly one decoder step, ``back`` calls ``DecodeSession.back()``, …"""
        self._run(request_id, lambda job: run_command(self.live, name, arg, job.check))

    @QtCore.Slot(str, int, object)
    def compute(self, queue: Queue, job: int, fn) -> None:
        """Run ``fn(checkpoint)`` here, one model user at a time (never beside a translation), and
        answer ``computed(queue, job, value)`` or ``compute_failed(queue, job, reason)`` (e.g. the
        inside of one attention step, :mod:`gui.panels.inside`). A job cancelled or superseded
        while it waited never runs and is not answered (its asker only listens for the newest)."""
        out = run_job(Job(self.jobs, Queue(queue), job), lambda _job: fn(self._checkpoint()))
        if out.ok:
            self.computed.emit(queue, job, out.value)
        elif out.reason is not None:
            self.compute_failed.emit(queue, job, out.reason)

    def _checkpoint(self) -> Checkpoint:
        if self.checkpoint is None:
            raise InputError("no model loaded")
        return self.checkpoint

    def _start(self, req: TranslateRequest, should_stop):
        self.live, state = start(self._checkpoint(), req, should_stop)
        return state

    def _run(self, request_id: int, work) -> None:
        """Job ``request_id`` of the translate queue through :func:`run_job`; answered with
        ``translated``, ``failed`` or ``cancelled`` (also when cancelled while it waited); ``busy``
        brackets the work when it runs."""
        job = Job(self.jobs, TRANSLATE, request_id)
        if job.cancelled():  # cancelled or superseded while it waited: answered, never run, not busy
            self.cancelled.emit(request_id)
            return
        self.busy.emit(True)
        try:
            out = run_job(job, work)
        finally:
            self.busy.emit(False)
        if out.cancelled:
            self.cancelled.emit(request_id)
        elif out.reason is not None:
            self.failed.emit(request_id, out.reason)
        else:
            self.translated.emit(request_id, out.value, out.ms)
