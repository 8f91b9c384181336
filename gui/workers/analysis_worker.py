"""Ablation and comparison runs off the GUI thread ("Interventions" and "Side by side").

:class:`AnalysisWorker` lives on its **own** QThread (:mod:`gui.panels.analysis` starts it), not on
the thread of the window's :class:`gui.workers.model_worker.ModelWorker`, so a translation or a live step runs
while an ablation or a comparison is going on. That is safe because nothing here changes the
app's model: an ablation sets ``ablated_heads`` on attention modules inside a ``with`` block
(:func:`core.transformer.ablation.ablated`), which on the shared model would ablate a translation
running beside it, so ablations run on this worker's private deep copy of the model
(:meth:`AnalysisWorker.ablation_model`); comparisons only run forward passes (no module state is
written, no hooks) and use the app's model directly. Ablations and comparisons run one after the
other on this thread. The second checkpoint of a comparison is loaded here too, never on the GUI
thread; the app's model stays.
Cancel uses the model worker's job board (:class:`gui.workers.jobs.JobBoard`, queues "ablate" and
"compare"): a waiting request never runs, a running one stops at its next
decoder step (a comparison also between its two runs, and while checkpoint B loads, at its next
progress report and right after the load); either is answered with ``cancelled``.
"""

from __future__ import annotations

import copy
import dataclasses
import weakref
from dataclasses import dataclass
from pathlib import Path

from PySide6 import QtCore

from core.analysis.ablation import parse_heads
from core.analysis.compare import ablation_report
from core.checkpoints.checkpoint import Checkpoint, load_checkpoint
from core.decoding.translate import translate
from core.errors import InputError, StudioError
from gui.workers.jobs import ABLATE, COMPARE, Cancelled, Job, JobBoard, Queue, run_job


@dataclass
class AblateRequest:
    """Ablate ``heads`` ("2:3,3:1", 1-based) of ``kind`` ("enc", "dec", "cross") on ``text``."""

    text: str
    heads: str
    kind: str = "enc"
    beam: int = 1
    pad_to: int | None = None


@dataclass
class CompareRequest:
    """``mode`` "inputs": ``text_a`` and ``text_b`` on the app's model; "checkpoints": ``text_a``
    on the app's model (A) and on the checkpoint directory ``path_b`` (B)."""

    mode: str
    text_a: str
    text_b: str = ""
    path_b: str = ""
    beam: int = 1
    pad_to: int | None = None


@dataclass
class CompareOutcome:
    """The two runs (:class:`~core.decoding.translate.Translation`) and their labels."""

    a: object
    b: object
    label_a: str
    label_b: str
    mode: str


class AnalysisWorker(QtCore.QObject):
    """Signals: ``ablated(int, AblationReport, float ms)``, ``compared(int, CompareOutcome, float)``,
    ``failed(int, str panel, str one-line reason)`` with panel "ablate" or "compare",
    ``cancelled(int, str panel)`` (request id). The tabs keep their own busy state (one per
    queue, :meth:`gui.widgets.controls.InputPanel.set_busy`).

    ``checkpoint_of()`` returns the app's current :class:`Checkpoint` (or None); it is read on
    this worker's thread (one attribute read; the model worker replaces the object, never
    changes it). ``jobs`` is the app's :class:`gui.workers.jobs.JobBoard` (the model worker's):
    a request cancelled there never runs or stops at its next decoder step, and one that is no
    longer the newest of its queue is skipped while it waits.
    """

    ablated = QtCore.Signal(int, object, float)
    compared = QtCore.Signal(int, object, float)
    failed = QtCore.Signal(int, str, str)
    cancelled = QtCore.Signal(int, str)

    def __init__(self, checkpoint_of, jobs: JobBoard | None = None) -> None:
        super().__init__()
        self.checkpoint_of = checkpoint_of
        self.jobs = jobs or JobBoard()
        self.second: Checkpoint | None = None  # the last checkpoint B that loaded
        self._copy: tuple | None = None  # (weakref to the app's Checkpoint, its private copy)

    def _model(self) -> Checkpoint:
        ckpt = self.checkpoint_of()
        if ckpt is None:
            raise InputError("no model loaded yet")
        return ckpt

    @staticmethod
    def _text(text: str, which: str = "") -> str:
        if not (text or "").strip():
            raise InputError(f"type a Korean sentence{which} first (the text is empty)")
        return text

    def ablation_model(self, ckpt: Checkpoint) -> Checkpoint:
        """``ckpt`` with a private deep copy of its model (made once per loaded checkpoint, on
        this thread): ablations set ``ablated_heads`` on its modules, never on the app's model,
        which a translation may be using at the same time on the model worker's thread."""
        if self._copy is None or self._copy[0]() is not ckpt:
            self._copy = (weakref.ref(ckpt), dataclasses.replace(ckpt, model=copy.deepcopy(ckpt.model)))
        return self._copy[1]

    def second_checkpoint(self, path: str, device: str, should_stop=None) -> Checkpoint:
        """Checkpoint B: the one already loaded from ``path``, else loaded now. ``should_stop()``
        (optional) is polled at each progress report of the load (it raises :class:`Cancelled`).

        Raises:
            StudioError: no path, or the checkpoint cannot be loaded (the previous B stays).
            Cancelled: ``should_stop`` raised it during the load."""
        if not path.strip():
            raise InputError("choose checkpoint B (a checkpoint directory) first")
        p = Path(path).expanduser()
        if self.second is not None and self.second.path.resolve() == p.resolve() and self.second.device.type == device:
            return self.second
        stopped = []

        def progress(message: str, fraction: float) -> None:
            if should_stop is not None:
                try:
                    should_stop()
                except Cancelled:
                    stopped.append(True)  # core wraps it while reading weights: see below
                    raise Cancelled("cancelled while loading checkpoint B") from None

        try:
            ckpt = load_checkpoint(p, device=device, progress=progress)
        except Exception as exc:
            if stopped:  # Cancelled, or core's CheckpointError around it
                raise Cancelled from None
            if isinstance(exc, (StudioError, ValueError, OSError)):
                raise InputError(f"checkpoint B could not be loaded: {exc}") from None
            raise
        self.second = ckpt
        return ckpt

    def _run(self, request_id: int, panel: Queue, work, done) -> None:
        """Job ``request_id`` of ``panel``'s queue through :func:`~gui.workers.jobs.run_job`, answered
        with ``done``, ``failed`` or ``cancelled``: one superseded while it waited is skipped (its
        answer would be ignored), one cancelled while it waited is answered ``cancelled``, never run."""
        out = run_job(Job(self.jobs, panel, request_id), lambda job: work(job.check), skip_superseded=True)
        if out.cancelled:
            self.cancelled.emit(request_id, panel)
        elif out.reason is not None:
            self.failed.emit(request_id, panel, out.reason)
        elif out.ran:
            done.emit(request_id, out.value, out.ms)

    @QtCore.Slot(int, object)
    def ablate(self, request_id: int, req: AblateRequest) -> None:
        def work(should_stop):
            ckpt = self._model()
            text = self._text(req.text)
            heads = parse_heads(req.heads)
            return ablation_report(
                self.ablation_model(ckpt), text, heads, req.kind, beam=req.beam, pad_to=req.pad_to, should_stop=should_stop
            )

        self._run(request_id, ABLATE, work, self.ablated)

    @QtCore.Slot(int, object)
    def compare(self, request_id: int, req: CompareRequest) -> None:
        def work(should_stop):
            ckpt = self._model()
            opts = dict(beam=req.beam, pad_to=req.pad_to, should_stop=should_stop)

            def both(ckpt_a, text_a, ckpt_b, text_b, label_a, label_b):
                a = translate(ckpt_a, text_a, **opts)
                should_stop()  # Cancel between the two runs: B never starts
                return CompareOutcome(a, translate(ckpt_b, text_b, **opts), label_a, label_b, req.mode)

            if req.mode == "inputs":
                a_text, b_text = self._text(req.text_a, " A"), self._text(req.text_b, " B")
                return both(ckpt, a_text, ckpt, b_text, f"A: {a_text.strip()}", f"B: {b_text.strip()}")
            if req.mode != "checkpoints":
                raise InputError(f"unknown comparison {req.mode!r}")
            text = self._text(req.text_a)
            second = self.second_checkpoint(req.path_b, ckpt.device.type, should_stop)
            should_stop()  # Cancel during an uninterruptible part of the load: nothing is decoded
            return both(ckpt, text, second, text, f"A: {ckpt.name}", f"B: {second.name}")

        self._run(request_id, COMPARE, work, self.compared)


__all__ = ["AnalysisWorker", "AblateRequest", "CompareRequest", "CompareOutcome"]
