"""The only place the GUI creates, starts and stops threads: each worker object (a QObject whose
slots do model work) lives on a QThread of its own, reached through queued signals.

Garbage collection: Python's cyclic collector runs in whichever thread happens to allocate. When
it runs in a worker thread and frees a Qt object left in a reference cycle (a closed window, a
widget whose slot is a lambda holding it), the object's C++ destructor runs there and waits for
the GUI thread: the worker deadlocked in ``QObject::~QObject`` while loading a model in a test
run. So before the first worker thread starts, automatic collection is switched off and
pyqtgraph's :class:`~pyqtgraph.util.garbage_collector.GarbageCollector` collects on a timer in
the GUI thread instead (same thresholds, checked every second).
"""

from __future__ import annotations

from pyqtgraph.util.garbage_collector import GarbageCollector
from PySide6 import QtCore

_collector: GarbageCollector | None = None


def collect_on_gui_thread() -> None:
    """Collect cyclic garbage only in the GUI thread from now on (idempotent; call it from the
    GUI thread, with a QApplication)."""
    global _collector
    if _collector is None:
        _collector = GarbageCollector(interval=1.0)


class WorkerThread(QtCore.QThread):
    """A thread that owns ``worker`` (moved onto it). ``start()`` begins its event loop;
    :meth:`stop` ends it and waits (work already running finishes its current step first:
    cancel it on the job board beforehand)."""

    def __init__(self, worker: QtCore.QObject, parent: QtCore.QObject | None = None) -> None:
        collect_on_gui_thread()  # before any worker thread runs: see the module doc
        super().__init__(parent)
        self.worker = worker
        worker.moveToThread(self)

    def stop(self) -> None:
        self.quit()
        self.wait()


__all__ = ["WorkerThread", "collect_on_gui_thread"]
