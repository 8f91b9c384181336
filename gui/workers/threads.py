"""The only place the GUI creates, starts and stops threads: each worker object (a QObject whose
slots do model work) lives on a QThread of its own, reached through queued signals.

Garbage collection: Python's cyclic collector runs in whichever thread happens to allocate. When
it runs in a worker thread and frees a Qt object left in a reference cycle (a closed window, a
widget whose slot is a lambda holding it), the object's C++ destructor runs there and waits for
the GUI thread: the worker deadlocked in ``QObject::~QObject`` while loading a model in a test
run. So before the first worker thread starts, automatic collection is switched off and
:class:`GuiThreadCollector` collects on a timer in the GUI thread instead (the interpreter's own
thresholds, checked every second; the scheme of pyqtgraph's ``GarbageCollector``).
"""

from __future__ import annotations

import gc

from PySide6 import QtCore


class GuiThreadCollector:
    """Switches automatic cyclic collection off and collects from a QTimer of the thread that made
    it instead: each generation whose count passed its threshold, as the interpreter itself would
    (``gc.get_threshold()``), every ``interval_s`` seconds."""

    def __init__(self, interval_s: float = 1.0) -> None:
        self.threshold = gc.get_threshold()
        gc.disable()
        self.timer = QtCore.QTimer()
        self.timer.timeout.connect(self.check)
        self.timer.start(int(interval_s * 1000))

    def check(self) -> None:
        """Collect the generations over their thresholds (youngest first, as the interpreter does)."""
        counts = gc.get_count()
        for generation in range(3):
            if counts[generation] <= self.threshold[generation]:
                break
            gc.collect(generation)


_collector: GuiThreadCollector | None = None


def collect_on_gui_thread() -> None:
    """Collect cyclic garbage only in the GUI thread from now on (idempotent; call it from the
    GUI thread, with a QApplication)."""
    global _collector
    if _collector is None:
        _collector = GuiThreadCollector(interval_s=1.0)


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
