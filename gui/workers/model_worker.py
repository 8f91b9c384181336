"""Model work off the GUI thread: a QObject living in a QThread, driven by queued signals.

The GUI never touches the model; it receives plain results (Checkpoint info, Translation).
Cancellation is by request id: :meth:`ModelWorker.cancel` ``(up_to)`` drops every translation
request with an id <= ``up_to``, the one running (it stops at its next decoder step) and the ones
still waiting in the thread's queue (they are answered with ``cancelled`` without running). Each
queue of requests numbers its own ids: ``"translate"`` (translations and live commands, the
window's ``request_id``), ``"ablate"`` and ``"compare"`` (the Ablate heads and Compare tabs,
:mod:`gui.workers.analysis_worker`, which polls :meth:`ModelWorker.is_dropped` the same way).
:meth:`ModelWorker.shutdown` drops everything, loads included, so closing the window never waits
for queued work.
"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass

from PySide6 import QtCore

from core.checkpoints.checkpoint import Checkpoint, load_checkpoint
from core.decoding.live import LiveDecoder
from core.errors import StudioError
from gui.state.live_commands import run_command, start

_TAGS = itertools.count(1)


def new_tag() -> int:
    """A tag for :meth:`ModelWorker.compute` no other caller has (thread-safe enough: GUI thread)."""
    return next(_TAGS)


class Cancelled(Exception):
    """Raised inside the worker when the user pressed Cancel."""


@dataclass
class TranslateRequest:
    """What to translate and how (beam 1 = greedy; pad_to None = no padding demo; reference =
    teacher forcing, with ``causal`` False for the mask-off demonstration; ``batch_with`` = a
    second sentence in the same padded batch; ``show_full``: compute the full output at once)."""

    text: str
    beam: int = 1
    pad_to: int | None = None
    reference: str | None = None
    top_k: int = 5
    batch_with: str | None = None
    show_full: bool = False
    causal: bool = True


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
        computed(int, object) / compute_failed(int, str): the answer to :meth:`compute`.
    """

    loaded = QtCore.Signal(object)
    load_failed = QtCore.Signal(str)
    load_progress = QtCore.Signal(str, float)
    translated = QtCore.Signal(int, object, float)
    failed = QtCore.Signal(int, str)
    cancelled = QtCore.Signal(int)
    busy = QtCore.Signal(bool)
    computed = QtCore.Signal(int, object)  # compute(tag, fn): tag, fn(checkpoint)
    compute_failed = QtCore.Signal(int, str)  # tag, one-line reason

    def __init__(self) -> None:
        super().__init__()
        self.checkpoint: Checkpoint | None = None
        self.live: LiveDecoder | None = None  # the sentence being stepped (greedy or beam)
        self._lock = threading.Lock()
        self._dropped_up_to: dict[str, int] = {}  # per queue: requests with an id <= this are cancelled
        self._closing = threading.Event()

    def cancel(self, up_to: int, queue: str = "translate") -> None:
        """Thread-safe: cancel every request of ``queue`` with id <= ``up_to``, running or waiting.
        Ids only grow, so a lower ``up_to`` than an earlier call changes nothing."""
        with self._lock:
            self._dropped_up_to[queue] = max(self._dropped_up_to.get(queue, 0), up_to)

    def shutdown(self) -> None:
        """Thread-safe: drop all work, running and waiting (translations and loads), for good."""
        self._closing.set()

    def is_dropped(self, request_id: int, queue: str = "translate") -> bool:
        """Thread-safe: True if request ``request_id`` of ``queue`` was cancelled or the worker is
        shutting down."""
        with self._lock:
            return self._closing.is_set() or request_id <= self._dropped_up_to.get(queue, 0)

    @QtCore.Slot(str, str)
    def load(self, path: str, device: str) -> None:
        if self._closing.is_set():
            return
        self.busy.emit(True)
        try:
            ckpt = load_checkpoint(path, device=device, progress=self.load_progress.emit)
        except (StudioError, ValueError, OSError) as exc:
            self.load_failed.emit(str(exc))
        except Exception as exc:  # noqa: BLE001 - never let a bad file kill the app
            self.load_failed.emit(f"{path}: unexpected error: {type(exc).__name__}: {exc}")
        else:
            self.checkpoint = ckpt
            self.loaded.emit(ckpt)
        finally:
            self.busy.emit(False)

    @QtCore.Slot(int, object)
    def translate(self, request_id: int, req: TranslateRequest) -> None:
        if self.is_dropped(request_id):  # cancelled or superseded while it waited
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
        if self.is_dropped(request_id):
            self.cancelled.emit(request_id)
            return
        self._run(request_id, lambda stop: run_command(self.live, name, arg, stop))

    @QtCore.Slot(int, object)
    def compute(self, tag: int, fn) -> None:
        """Run ``fn(checkpoint)`` here, one model user at a time (never beside a translation), and
        answer ``computed(tag, value)`` or ``compute_failed(tag, reason)`` (e.g. the inside of one
        attention step, :mod:`gui.panels.inside`)."""
        if self._closing.is_set():
            return
        if self.checkpoint is None:
            self.compute_failed.emit(tag, "no model loaded")
            return
        try:
            value = fn(self.checkpoint)
        except (StudioError, ValueError) as exc:
            self.compute_failed.emit(tag, str(exc))
        except Exception as exc:  # noqa: BLE001 - report, keep the app alive
            self.compute_failed.emit(tag, f"unexpected error: {type(exc).__name__}: {exc}")
        else:
            self.computed.emit(tag, value)

    def _start(self, req: TranslateRequest, should_stop):
        self.live, state = start(self.checkpoint, req, should_stop)
        return state

    def _run(self, request_id: int, work) -> None:
        def should_stop() -> None:
            if self.is_dropped(request_id):
                raise Cancelled

        self.busy.emit(True)
        t0 = time.perf_counter()
        try:
            result = work(should_stop)
        except Cancelled:
            self.cancelled.emit(request_id)
        except (StudioError, ValueError) as exc:
            self.failed.emit(request_id, str(exc))
        except Exception as exc:  # noqa: BLE001 - report, keep the app alive
            self.failed.emit(request_id, f"unexpected error: {type(exc).__name__}: {exc}")
        else:
            self.translated.emit(request_id, result, (time.perf_counter() - t0) * 1000.0)
        finally:
            self.busy.emit(False)
