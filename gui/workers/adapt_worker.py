"""Adapting the loaded model to a lecturer's pairs off the GUI thread (the "Adapt" tab).

:class:`AdaptWorker` lives on its own QThread (the tab starts it through
:class:`gui.workers.threads.WorkerThread`), so translations go on on the model worker while it
fine-tunes. It calls :func:`core.training.adapt.adapt` on a copy read from the base checkpoint's
folder (the app's model is never touched), then loads the base and the saved result on the CPU and
translates the first pairs' sources with each (greedy) for the before/after view. Every run is a
job of the queue ``"adapt"`` on the app's :class:`gui.workers.jobs.JobBoard`; Cancel or closing
the window (the board's shutdown) stops it before the next update, and nothing is saved.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6 import QtCore

from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.translate import Translation, translate
from core.errors import StudioError
from core.training.adapt import AdaptCancelled, AdaptResult, adapt
from core.training.adapt_options import AdaptOptions
from gui.workers.jobs import Cancelled, Job, JobBoard, Queue

QUEUE = Queue("adapt")
SHOWN = 20  # pairs translated before and after (the first ones)


@dataclass(frozen=True)
class AdaptSpec:
    """One run: fine-tune the checkpoint folder ``base`` on ``pairs`` (Korean, English) and save
    it to the new folder ``out`` as the model ``name``; ``source`` says where the pairs came from
    (for the card)."""

    base: str
    pairs: list[tuple[str, str]]
    out: str
    name: str
    options: AdaptOptions = field(default_factory=AdaptOptions)
    source: str = "the given pairs"


@dataclass(frozen=True)
class AdaptOutcome:
    """A finished run: ``result`` (the saved folder, losses …), the ``pairs`` it was adapted on,
    and for the first :data:`SHOWN` of them the base's (``before``) and the adapted model's
    (``after``) greedy :class:`Translation` of the Korean side (with their attention maps)."""

    spec: AdaptSpec
    result: AdaptResult
    before: list[Translation]
    after: list[Translation]


class AdaptWorker(QtCore.QObject):
    """Slot (queued, runs on this worker's thread): ``run(job, AdaptSpec)``.

    Signals: ``progress(job, done, total, loss)`` after each update (loss: nats/token,
    label-smoothed); ``finished(job, AdaptOutcome)``; ``cancelled(job, str)`` (nothing was saved);
    ``failed(job, str reason)`` (one line; nothing was saved, the app's model is unchanged)."""

    progress = QtCore.Signal(int, int, int, float)
    finished = QtCore.Signal(int, object)
    cancelled = QtCore.Signal(int, str)
    failed = QtCore.Signal(int, str)

    def __init__(self, jobs: JobBoard) -> None:
        super().__init__()
        self.jobs = jobs

    @QtCore.Slot(int, object)
    def run(self, job: int, spec: AdaptSpec) -> None:
        """Adapt, save, then translate before and after (see the module doc)."""
        this = Job(self.jobs, QUEUE, job)
        if this.cancelled():
            return
        try:
            result = adapt(
                spec.base,
                spec.pairs,
                spec.out,
                spec.name,
                spec.options,
                source=spec.source,
                progress=lambda done, total, loss: self.progress.emit(job, done, total, loss),
                should_cancel=this.cancelled,
            )
        except AdaptCancelled as exc:
            if not self.jobs.closed:
                self.cancelled.emit(job, str(exc))
            return
        except (StudioError, ValueError, OSError) as exc:
            self.failed.emit(job, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            return
        try:
            base, new = load_checkpoint(spec.base, device="cpu"), load_checkpoint(result.path, device="cpu")
            sources = [ko for ko, _ in spec.pairs[:SHOWN]]
            before = [translate(base, ko, should_stop=this.check) for ko in sources]
            after = [translate(new, ko, should_stop=this.check) for ko in sources]
        except Cancelled:  # after the save: the model stays, only the comparison is skipped
            if not self.jobs.closed:
                self.cancelled.emit(job, f"saved {result.path}; the before/after comparison was cancelled")
            return
        except (StudioError, ValueError, OSError) as exc:
            self.failed.emit(job, f"saved {result.path}, but the before/after translation failed: {exc}")
            return
        self.finished.emit(job, AdaptOutcome(spec, result, before, after))


__all__ = ["QUEUE", "SHOWN", "AdaptOutcome", "AdaptSpec", "AdaptWorker"]
