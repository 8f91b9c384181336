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

import time
from dataclasses import dataclass, field

from PySide6 import QtCore

from core.checkpoints.checkpoint import Checkpoint, load_checkpoint
from core.decoding.live import LiveDecoder
from core.decoding.strategy import DecodingStrategy
from core.errors import StudioError
from gui.state.live_commands import run_command, start
from gui.workers.jobs import Cancelled, JobBoard

TRANSLATE = "translate"  # the queue of the main translation and its live commands


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
        if self.jobs.is_cancelled(TRANSLATE, request_id):  # cancelled or superseded while it waited
            self.cancelled.emit(request_id)
            return
        if self.checkpoint is None:
            self.failed.emit(request_id, "no model loaded")
            return

        self._run(request_id, lambda stop: self._start(req, stop))

    @QtCore.Slot(int, str, object)
    def command(self, request_id: int, name: str, arg) -> None:
        """A live command on the current sentence (see :func:`gui.state.live_commands.run_command`):
        ``step`` runs exactly one decoder step, ``back`` calls ``DecodeSession.back()``, …"""
        if self.jobs.is_cancelled(TRANSLATE, request_id):
            self.cancelled.emit(request_id)
            return
        self._run(request_id, lambda stop: run_command(self.live, name, arg, stop))

    @QtCore.Slot(str, int, object)
    def compute(self, queue: str, job: int, fn) -> None:
        """Run ``fn(checkpoint)`` here, one model user at a time (never beside a translation), and
        answer ``computed(queue, job, value)`` or ``compute_failed(queue, job, reason)`` (e.g. the
        inside of one attention step, :mod:`gui.panels.inside`). A job superseded while it waited
        never runs and is not answered (its asker only listens for the newest)."""
        if self.jobs.is_cancelled(queue, job):
            return
        if self.checkpoint is None:
            self.compute_failed.emit(queue, job, "no model loaded")
            return
        try:
            value = fn(self.checkpoint)
        except (StudioError, ValueError) as exc:
            self.compute_failed.emit(queue, job, str(exc))
        except Exception as exc:
            self.compute_failed.emit(queue, job, f"unexpected error: {type(exc).__name__}: {exc}")
        else:
            self.computed.emit(queue, job, value)

    def _start(self, req: TranslateRequest, should_stop):
        self.live, state = start(self.checkpoint, req, should_stop)
        return state

    def _run(self, request_id: int, work) -> None:
        should_stop = self.jobs.stopper(TRANSLATE, request_id)
        self.busy.emit(True)
        t0 = time.perf_counter()
        try:
            result = work(should_stop)
        except Cancelled:
            self.cancelled.emit(request_id)
        except (StudioError, ValueError) as exc:
            self.failed.emit(request_id, str(exc))
        except Exception as exc:
            self.failed.emit(request_id, f"unexpected error: {type(exc).__name__}: {exc}")
        else:
            self.translated.emit(request_id, result, (time.perf_counter() - t0) * 1000.0)
        finally:
            self.busy.emit(False)
