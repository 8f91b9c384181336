"""The only place the GUI creates, starts and stops threads: each worker object (a QObject whose
slots do model work) lives on a QThread of its own, reached through queued signals."""

from __future__ import annotations

from PySide6 import QtCore


class WorkerThread(QtCore.QThread):
    """A thread that owns ``worker`` (moved onto it). ``start()`` begins its event loop;
    :meth:`stop` ends it and waits (work already running finishes its current step first:
    cancel it on the job board beforehand)."""

    def __init__(self, worker: QtCore.QObject, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.worker = worker
        worker.moveToThread(self)

    def stop(self) -> None:
        self.quit()
        self.wait()


__all__ = ["WorkerThread"]
