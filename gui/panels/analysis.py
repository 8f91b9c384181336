"""The "Ablate heads" and "Compare" tabs, wired to an
:class:`~gui.workers.analysis_worker.AnalysisWorker` living on its own thread (so the main input can
translate and step while a run goes on; the window's Translate button follows only its own queue).

The panels follow the main window: the head they draw is the one selected in the grid (view kind,
layer, head; in the Masks view the first ablated head, or cross-attention L1 H1), the top-k is at
the main view's step. A new request of a tab cancels that tab's older one (running: it stops at
its next decoder step; waiting: it never runs); failures leave the last result.
Cancel (:meth:`AnalysisTabs.cancel`, from the window's Cancel button) drops a running or waiting
ablation or comparison through the model worker's request-id cancellation (queues "ablate" and
"compare"); the tab returns to idle at once (even while checkpoint B is still loading), a late
answer is discarded, the last result stays and the status bar says so.
"""

from __future__ import annotations

from PySide6 import QtCore

from core.errors import InputError
from gui.panels.ablation import AblationPanel
from gui.panels.compare import ComparePanel
from gui.panels.context import Panel, PanelContext
from gui.state import view_kinds
from gui.workers.analysis_worker import AblateRequest, AnalysisWorker, CompareRequest
from gui.workers.jobs import ABLATE, COMPARE, Queue
from gui.workers.threads import WorkerThread


class AnalysisTabs(QtCore.QObject, Panel):
    """``ablation`` and ``compare`` panels (two tabs of ``ctx.tabs``) and their ``worker``.

    ``request_ablate(int id, AblateRequest)`` / ``request_compare(int id, CompareRequest)`` reach
    the worker through queued connections (it lives on its own ``thread``); ``answered(str panel)`` is
    emitted on the GUI thread once the latest request's result, error or cancellation is shown.
    ``pending[panel]`` is the id of the request the tab still waits for (None: idle); the window's
    busy state for that queue (:meth:`gui.widgets.controls.InputBar.set_busy`) follows it."""

    request_ablate = QtCore.Signal(int, object)
    request_compare = QtCore.Signal(int, object)
    answered = QtCore.Signal(str)  # "ablate" or "compare": the latest request's answer is on screen

    name = "analysis"
    lazy_tab_titles = ("Ablate heads", "Compare")

    def __init__(self, ctx: PanelContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.pending: dict[str, int | None] = {ABLATE: None, COMPARE: None}
        self._a_from_main = {"pending": False, "shown": False}  # compare's A: the main input's text?
        self._main_answers = 0  # main results shown so far (a late analysis answer checks it)
        self._state_seen = None  # the view model's state last followed
        self._asked_at = {ABLATE: 0, COMPARE: 0}  # _main_answers when each tab's run was asked
        self.jobs = ctx.worker.jobs  # one job board for the app (gui/workers/jobs.py)
        self.worker = AnalysisWorker(lambda: ctx.worker.checkpoint, self.jobs)
        self.thread = WorkerThread(self.worker, self)  # its own: translations never wait for an analysis
        self.ablation, self.compare = AblationPanel(), ComparePanel()
        for panel in (self.ablation, self.compare):
            panel.tabs = ctx.tabs
        self.request_ablate.connect(self.worker.ablate)
        self.request_compare.connect(self.worker.compare)
        self.worker.ablated.connect(self._on_ablated)
        self.worker.compared.connect(self._on_compared)
        self.worker.failed.connect(self._on_failed)
        self.worker.cancelled.connect(self._on_cancelled)
        # bound methods of this GUI-thread object, never lambdas: a lambda connected to a signal of
        # the worker would run on the worker's thread
        ctx.worker.loaded.connect(self._on_loaded)
        self.ablation.ablate_requested.connect(self.ablate)
        self.compare.compare_requested.connect(self.run_compare)
        ctx.vm.subscribe(self._follow)
        self.thread.start()

    @property
    def ids(self) -> dict[str, int]:
        """The newest job id of each tab's queue ("ablate", "compare")."""
        return {q: self.jobs.latest(q) for q in (ABLATE, COMPARE)}

    def tabs(self) -> list:
        return [(self.ablation, self.ablation.tab_title), (self.compare, self.compare.tab_title)]

    def stop(self) -> None:
        """On closing the window, after the model worker's ``shutdown()`` (which drops every request, so a
        running analysis stops at its next step): end the analysis thread."""
        self.thread.stop()

    # ---------- requests ----------
    def _next(self, panel: Queue) -> int:
        """A new request id for ``panel``: the older ones are cancelled (a running one stops at its
        next decoder step instead of running to the end; waiting ones are skipped)."""
        job = self.jobs.start(panel)  # older jobs of the tab: cancelled (running ones stop, waiting ones never run)
        self._asked_at[panel] = self._main_answers
        self._set_pending(panel, job)
        return job

    def _set_pending(self, panel: str, rid: int | None) -> None:
        self.pending[panel] = rid
        self.ctx.set_busy(rid is not None, panel)  # Cancel stays enabled while one waits

    def _answer(self, panel: str, rid: int) -> bool:
        """True (and the tab idle) if ``rid`` is the answer the tab waits for; else ignore it: a
        superseded request's, or one answered already by :meth:`cancel`."""
        if rid != self.pending[panel]:
            return False
        self._set_pending(panel, None)
        return True

    def ablate(self) -> int:
        """Ablate the ticked heads on the sentence typed in the main input (its beam and pad-to)."""
        main, p = self.ctx.request(), self.ablation
        req = AblateRequest(main.text, p.heads.text(), p.core_kind, main.beam, main.pad_to)
        p.status.setText("ablating …")
        rid = self._next(ABLATE)
        self.request_ablate.emit(rid, req)
        return rid

    def run_compare(self) -> int:
        """Compare two inputs (A empty: the main input) or the main input on two checkpoints."""
        main, p = self.ctx.request(), self.compare
        text_a = p.text_a.text().strip() or main.text
        self._a_from_main["pending"] = not p.text_a.text().strip()
        req = CompareRequest(p.current_mode, text_a, p.text_b.text(), p.path_b.text().strip(), main.beam, main.pad_to)
        p.status.setText("loading checkpoint B and comparing …" if req.mode == "checkpoints" else "comparing …")
        rid = self._next(COMPARE)
        self.request_compare.emit(rid, req)
        return rid

    def cancel(self) -> None:
        """Cancel the latest ablation and comparison (and older ones still waiting): a running
        one stops at its next decoder step (or checkpoint B's load at its next progress report);
        the tab goes idle now, keeps its last result and ignores the run's late answer."""
        for panel in (ABLATE, COMPARE):
            self.jobs.cancel(panel)
            if self.pending[panel] is not None:
                self._on_cancelled(self.pending[panel], panel)

    # ---------- answers (GUI thread) ----------
    @QtCore.Slot(object)
    def _on_loaded(self, ckpt) -> None:
        ran = set()
        for name, rid in self.ids.items():  # a run on the old model would answer late: drop it
            self.jobs.cancel(name)
            if self._answer(name, rid):
                ran.add(name)
        self.ablation.set_model(ckpt.config)
        for name, panel in (("ablate", self.ablation), ("compare", self.compare)):
            if panel.npz_extra() or name in ran:
                panel.clear_result("a model was loaded since: press the button again")
            if name in ran:
                self.answered.emit(name)

    def catch_up(self) -> None:
        """Built after the start: the heads of the model already loaded; the result already shown
        is this panel's starting point (nothing of it to drop)."""
        if self.ctx.worker.checkpoint is not None:
            self.ablation.set_model(self.ctx.worker.checkpoint.config)
        self._state_seen = self.ctx.vm.state
        self.refresh()

    def _follow(self) -> None:
        """The view model changed: after a new main result drop results of another sentence;
        follow the selected head and step."""
        if self.ctx.vm.state is not self._state_seen:
            self._state_seen = self.ctx.vm.state
            self._main_answers += 1
            self.drop_stale()
        self.refresh()

    def selection(self, fallback: tuple[str, int, int]) -> tuple[str, int, int]:
        """(view kind, 0-based layer, head) selected in the main grid; ``fallback`` in the Masks view."""
        vm = self.ctx.vm
        if view_kinds.get(vm.kind).is_masks:
            return fallback
        return vm.kind, int(vm.selected[0]), int(vm.selected[1])

    def _ablation_selection(self) -> tuple[str, int, int]:
        r = self.ablation.report.result
        la, h = r.heads[0]
        return self.selection((view_kinds.for_attention(r.kind).name, la - 1, h - 1))

    def _on_ablated(self, rid: int, report, ms: float) -> None:
        if not self._answer("ablate", rid):
            return
        old = self.ablation.report
        self.ablation.report = report
        try:
            self.ablation.show_report(report, ms, self._ablation_selection(), self.ctx.vm.step)
        except InputError as exc:
            self.ablation.report = old
            self.ablation.show_error(str(exc))
        self._drop_if_overtaken("ablate")
        self.answered.emit("ablate")

    def _on_compared(self, rid: int, outcome, ms: float) -> None:
        if self._answer("compare", rid):
            self._a_from_main["shown"] = self._a_from_main["pending"]
            self.compare.show_outcome(outcome, ms, self.selection((view_kinds.DEFAULT, 0, 0)))
            self._drop_if_overtaken("compare")
            self.answered.emit("compare")

    def _on_failed(self, rid: int, panel: str, reason: str) -> None:
        if self._answer(panel, rid):
            (self.ablation if panel == "ablate" else self.compare).show_error(reason)
            self.answered.emit(panel)

    def _on_cancelled(self, rid: int, panel: str) -> None:
        if self._answer(panel, rid):
            what = "ablation" if panel == "ablate" else "comparison"
            (self.ablation if panel == "ablate" else self.compare).show_error(f"{what} cancelled")
            self.ctx.status(f"{what} cancelled; the last result stays on screen", 5000)
            self.answered.emit(panel)

    def _drop_if_overtaken(self, panel: str) -> None:
        """A run answered after a main translation that arrived while it ran: that translation
        could not clear it yet, so apply the same rule now (:meth:`drop_stale`)."""
        if self._asked_at[panel] != self._main_answers:
            self.drop_stale()

    def drop_stale(self) -> None:
        """After a new main translation: clear a result made for another sentence, the ablation
        (always of the main input) and a comparison whose A was the main input."""
        result = self.ctx.vm.result
        if result is None:
            return
        text = result.source.text
        rep = self.ablation.report
        if rep is not None and rep.result.original.source.text != text:
            self.ablation.clear_result("the sentence changed: press Ablate again")
        o = self.compare.outcome
        if o is not None and self._a_from_main["shown"] and o.a.source.text != text:
            self.compare.clear_result("the sentence changed: press Compare again")

    def npz_extra(self) -> dict:
        """Both tabs' results on screen for File → Export (.npz): ``ablate_*``, ``compare_*``
        (each self-describing: its source texts are included). A result of a sentence the main
        window no longer shows was cleared when that translation arrived (:meth:`drop_stale`)."""
        return {**self.ablation.npz_extra(), **self.compare.npz_extra()}

    def set_colormap(self, cmap) -> None:
        """View → Colour map: both tabs' maps (not the diverging difference map)."""
        for panel in (self.ablation, self.compare):
            panel.maps.set_colormap(cmap)

    def set_scale(self, scale: str) -> None:
        """View → Colour scale ("fixed" [0, 1] or "per-map"): both tabs' maps, redrawn."""
        for panel in (self.ablation, self.compare):
            panel.maps.set_scale(scale)

    def refresh(self) -> None:
        """Follow the main window's selected head and step."""
        try:
            if self.ablation.report is not None:
                self.ablation.refresh(self._ablation_selection(), self.ctx.vm.step)
        except InputError as exc:
            self.ablation.show_error(str(exc))
        self.compare.refresh(self.selection((view_kinds.DEFAULT, 0, 0)))
