"""A tab that follows the view model while it is shown and asks the model's worker thread for
work (the "Inside one step" and "Positional encoding" tabs)."""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from gui.panels.context import Panel, PanelContext
from gui.workers.model_worker import new_tag


class WorkerTab(QtWidgets.QWidget, Panel):
    """Base class. ``ask(fn)`` sends ``fn(checkpoint)`` to :meth:`gui.workers.model_worker.ModelWorker.compute`
    (queued: it runs on the worker's thread) under a new tag and returns that tag; answers come to
    ``_on_computed(tag, value)`` / ``_on_failed(tag, reason)``, which subclasses implement and
    which must ignore a tag other than ``_tag`` (another tab's, or a superseded request's).
    ``refresh()`` (subclasses) runs on every change of the view model or the style, but only
    while the tab is shown (and when it is shown): a hidden tab does no work."""

    request = QtCore.Signal(int, object)  # to ModelWorker.compute
    tab_title = ""

    def __init__(self, ctx: PanelContext) -> None:
        super().__init__()
        self.ctx = ctx
        self._tag: int | None = None
        self.request.connect(ctx.worker.compute)
        ctx.worker.computed.connect(self._on_computed)
        ctx.worker.compute_failed.connect(self._on_failed)
        ctx.vm.subscribe(self._follow)
        ctx.style.changed.connect(self._follow)
        self.destroyed.connect(lambda *_: ctx.vm.unsubscribe(self._follow))

    def tabs(self) -> list[tuple[QtWidgets.QWidget, str]]:
        return [(self, self.tab_title)]

    def _follow(self) -> None:
        if self.isVisible():
            self.refresh()

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
        """Catch up with the view model when shown."""
        super().showEvent(event)
        self.refresh()
