"""Cyclic garbage is collected in the GUI thread only (gui/workers/threads.py): a worker thread
that ran the collector could destroy a Qt object from the wrong thread and deadlock."""

from __future__ import annotations

import gc
import weakref

from PySide6 import QtCore

from gui.workers.threads import WorkerThread


class Cycle:
    def __init__(self) -> None:
        self.me = self  # only the cyclic collector can free it


def test_worker_threads_leave_collection_to_the_gui_thread(qtbot):
    thread = WorkerThread(QtCore.QObject())
    assert not gc.isenabled()  # no automatic collection in whichever thread allocates
    ref = weakref.ref(Cycle())
    for _ in range(5000):  # well past generation 0's threshold (700), whatever else is freed meanwhile
        Cycle()
    assert ref() is not None  # nothing collected it yet
    qtbot.waitUntil(lambda: ref() is None, timeout=5000)  # the GUI thread's timer did
    thread.deleteLater()
