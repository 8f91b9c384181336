"""Model work off the GUI thread: a QObject living in a QThread, driven by queued signals.

The GUI never touches the model; it receives plain results (Checkpoint info, Translation).
Cancellation: :meth:`ModelWorker.cancel` sets a thread-safe flag polled between decoder steps.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from PySide6 import QtCore

from core.errors import StudioError
from core.inference.checkpoint import Checkpoint, load_checkpoint
from core.inference.translate import translate


class Cancelled(Exception):
    """Raised inside the worker when the user pressed Cancel."""


@dataclass
class TranslateRequest:
    """What to translate and how (beam 1 = greedy; pad_to None = no padding demo)."""

    text: str
    beam: int = 1
    pad_to: int | None = None
    reference: str | None = None
    top_k: int = 5


class ModelWorker(QtCore.QObject):
    """Loads checkpoints and translates; every outcome is a signal.

    Signals:
        loaded(Checkpoint): a new model is active (the old one is dropped only now).
        load_failed(str): one-line reason; the previous model stays active.
        translated(int, Translation, float): request id, result, milliseconds taken.
        failed(int, str): request id, one-line reason. cancelled(int): request id.
        busy(bool): work started/finished.
    """

    loaded = QtCore.Signal(object)
    load_failed = QtCore.Signal(str)
    translated = QtCore.Signal(int, object, float)
    failed = QtCore.Signal(int, str)
    cancelled = QtCore.Signal(int)
    busy = QtCore.Signal(bool)

    def __init__(self) -> None:
        super().__init__()
        self.checkpoint: Checkpoint | None = None
        self._cancel = threading.Event()

    def cancel(self) -> None:
        """Thread-safe: ask the running translation to stop at its next step."""
        self._cancel.set()

    def _should_stop(self) -> None:
        if self._cancel.is_set():
            raise Cancelled

    @QtCore.Slot(str, str)
    def load(self, path: str, device: str) -> None:
        self.busy.emit(True)
        try:
            ckpt = load_checkpoint(path, device=device)
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
        if self.checkpoint is None:
            self.failed.emit(request_id, "no model loaded")
            return
        self._cancel.clear()
        self.busy.emit(True)
        t0 = time.perf_counter()
        try:
            result = translate(self.checkpoint, req.text, beam=req.beam, pad_to=req.pad_to,
                               reference=req.reference, top_k=req.top_k, should_stop=self._should_stop)
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
