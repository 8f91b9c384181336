"""A tab that follows the main window while it is shown and asks the model's worker thread for
work (the "Inside one step" and "Positional encoding" tabs)."""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from gui.workers.model_worker import new_tag


class WorkerTab(QtWidgets.QWidget):
    """Base class. ``ask(fn)`` sends ``fn(checkpoint)`` to :meth:`gui.workers.model_worker.ModelWorker.compute`
    (queued: it runs on the worker's thread) under a new tag and returns that tag; answers come to
    ``_on_computed(tag, value)`` / ``_on_failed(tag, reason)``, which subclasses implement and
    which must ignore a tag other than ``_tag`` (another tab's, or a superseded request's).
    ``refresh()`` (subclasses) is polled every ``poll_ms`` only while the tab is shown: a hidden
    tab costs no timer ticks."""

    request = QtCore.Signal(int, object)  # to ModelWorker.compute

    def __init__(self, win, poll_ms: int) -> None:
        super().__init__()
        self.win = win
        self._tag: int | None = None
        self.request.connect(win.worker.compute)
        win.worker.computed.connect(self._on_computed)
        win.worker.compute_failed.connect(self._on_failed)
        self.timer = QtCore.QTimer(self)  # follow the main window's view model, as present.py does
        self.timer.timeout.connect(self.refresh)
        self.timer.setInterval(poll_ms)  # runs only while the tab is shown (showEvent / hideEvent)

    def ask(self, fn) -> int:
        """Send ``fn(checkpoint)`` to the worker; the tag its answer will carry."""
        self._tag = tag = new_tag()
        self.request.emit(tag, fn)
        return tag

    def refresh(self) -> None:
        raise NotImplementedError

    def _on_computed(self, tag: int, value) -> None:
        raise NotImplementedError

    def _on_failed(self, tag: int, reason: str) -> None:
        raise NotImplementedError

    def showEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        """Follow the main window only while visible."""
        super().showEvent(event)
        self.timer.start()
        self.refresh()

    def hideEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        self.timer.stop()
        super().hideEvent(event)
