"""A tab that follows the view model while it is shown and asks the model's worker thread for
work (the "Inside one step" and "Positional encoding" tabs)."""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from gui.panels.context import Panel, PanelContext
from gui.workers.jobs import Queue, compute_queue


class WorkerTab(QtWidgets.QWidget, Panel):
    """Base class. ``ask(fn)`` sends ``fn(checkpoint)`` to :meth:`gui.workers.model_worker.ModelWorker.compute`
    (queued: it runs on the worker's thread) as a new job of the queue ``"compute:<name>"`` on
    the app's job board (an older job of this tab that still waits never runs) and returns the
    job id (also ``_tag``). Only the answer to the newest job reaches the subclass's
    ``on_computed(value)`` / ``on_failed(reason)``; other tabs' and superseded answers are dropped.
    ``refresh()`` (subclasses) runs on every change of the view model or the style, but only
    while the tab is shown (and when it is shown): a hidden tab does no work."""

    request = QtCore.Signal(str, int, object)  # to ModelWorker.compute(queue, job, fn)
    tab_title = ""

    def __init__(self, ctx: PanelContext) -> None:
        super().__init__()
        self.ctx = ctx
        self._tag: int | None = None
        self.request.connect(ctx.worker.compute)
        ctx.worker.computed.connect(self._on_answer)
        ctx.worker.compute_failed.connect(self._on_failure)
        ctx.vm.subscribe(self._follow)
        ctx.style.changed.connect(self._follow)
        self.destroyed.connect(lambda *_: ctx.vm.unsubscribe(self._follow))

    def tabs(self) -> list[tuple[QtWidgets.QWidget, str]]:
        return [(self, self.tab_title)]

    def _follow(self) -> None:
        if self.isVisible():
            self.refresh()

    @property
    def queue(self) -> Queue:
        return compute_queue(self.name)

    def ask(self, fn) -> int:
        """Send ``fn(checkpoint)`` to the worker as a new job; returns its id."""
        self._tag = job = self.ctx.worker.jobs.start(self.queue)
        self.request.emit(self.queue, job, fn)
        return job

    def _current(self, queue: str, job: int) -> bool:
        return queue == self.queue and self.ctx.worker.jobs.is_current(queue, job)

    def _on_answer(self, queue: str, job: int, value) -> None:
        if self._current(queue, job):
            self.on_computed(value)

    def _on_failure(self, queue: str, job: int, reason: str) -> None:
        if self._current(queue, job):
            self.on_failed(reason)

    def refresh(self) -> None:
        raise NotImplementedError

    def on_computed(self, value) -> None:
        """The answer to this tab's newest job."""
        raise NotImplementedError

    def on_failed(self, reason: str) -> None:
        """This tab's newest job failed: ``reason`` in one line."""
        raise NotImplementedError

    def showEvent(self, event) -> None:
        """Catch up with the view model when shown."""
        super().showEvent(event)
        self.refresh()
