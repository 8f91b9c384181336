"""Wires the step controls, the experiment panels and the worker's live decoder to the view model.

Live (greedy or beam): Step ▶ sends ``step`` (exactly one decoder step on the KV cache), ◀ Back
sends ``back`` (``DecodeSession.back()``; from the end of a fork it returns to the fork point),
Play steps on the timer, the slider and Reset / Run to end send ``seek k``. Complete results
(teacher forcing, a batch) are revealed locally without the model.

The controller also follows each translation the window sends (:meth:`LiveController.request_sent`
… ``request_answered`` / ``request_dropped``): while one is computed the step controls and the
experiment commands wait (there is nothing to step through yet), and a cancelled one puts the
settings that describe the result on screen back to that result.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from gui.panels.experiments import BeamPanel, ExperimentBar, ForkPanel, ReferencePanel
from gui.state.view_model import ViewModel
from gui.workers.model_worker import TRANSLATE, TranslateRequest

WAIT_MESSAGE = "translating …: the step controls wait for the new result (Cancel stops it)"


class LiveController(QtCore.QObject):
    """Owns the experiment panels (``tabs``, ``bar``) and routes controls to the worker.

    ``request_command(int request id, str name, object arg)`` reaches the worker's ``command``
    slot through a queued connection.
    """

    request_command = QtCore.Signal(int, str, object)

    def __init__(self, win) -> None:
        super().__init__(win)
        self.win = win
        self.vm: ViewModel = win.vm
        self.fork = ForkPanel()
        self.reference = ReferencePanel()
        self.beam = BeamPanel()
        self.bar = ExperimentBar()
        self.tabs = QtWidgets.QTabWidget()
        self.tabs.addTab(self.fork, "Force a token")
        self.tabs.addTab(self.reference, "Teacher forcing")
        self.tabs.addTab(self.beam, "Beam")
        self.causal = True
        self.shown_request: TranslateRequest | None = None  # the request behind the result on screen
        self.pending: tuple[int, TranslateRequest] | None = None  # (job, request) sent and not answered yet
        self.request_command.connect(win.worker.command)
        win.controls.position_changed.connect(self.on_position)
        win.controls.refused.connect(self.refuse_step)
        win.inputs.reference.textChanged.connect(self.on_reference_edited)
        self.bar.translate_requested.connect(win.translate)
        win.topk.clicked.connect(self.force_candidate)
        self.fork.force_word.connect(lambda text: self.send("force_word", (self.fork_step(), text)))
        self.fork.unfork.connect(lambda: self.send("unfork", None))
        self.beam.path_clicked.connect(lambda ids, done: self.send("path", (ids, done)))
        self.reference.causal_toggled.connect(self.set_causal)
        self.bar.batch_index_changed.connect(self.show_batch)
        self.bar.show_full_changed.connect(self.set_show_full)

    # ---------- commands ----------
    def send(self, name: str, arg) -> None:
        if self.pending is not None:  # it would run on the decoder of the translation still being computed
            self.refuse_step()
            return
        if not self.vm.live:
            self.win.status.showMessage("not live: this needs greedy or beam decoding of one sentence", 5000)
            return
        # each command is a request of its own: Cancel drops it (and any waiting behind it) but not
        # the sentence; answers to superseded commands are ignored by the window
        job = self.win.worker.jobs.start(TRANSLATE, supersede=False)
        self.request_command.emit(job, name, arg)
        self.win.controls.await_draw()  # Play and further clicks wait until this step is drawn
        self.win.set_computing(True)

    def fork_step(self) -> int:
        """The step whose token a force replaces: the one shown (its candidates), or 1 at step 0."""
        return max(1, self.vm.step)

    def force_candidate(self, i: int) -> None:
        """A click on top-k bar ``i`` of the step shown: force that candidate there."""
        r, k = self.vm.result, self.vm.step
        if r is None or not 1 <= k <= len(r.steps) or i >= len(r.steps[k - 1].top_ids):
            return
        self.send("force_id", (k, r.steps[k - 1].top_ids[i]))

    def on_position(self, k: int) -> None:
        """The slider moved (Step, Back, Play, Reset, Run to end, keys or a drag)."""
        vm = self.vm
        if vm.result is None:
            return
        if self.pending is not None:  # a drag while a new translation is computed: stay on the step shown
            self.sync()
            self.refuse_step()
            return
        if not vm.live:
            vm.set_step(k)
            self.win.redraw()
            return
        n = len(vm.result.steps)
        if k == n:
            return
        self.send("step" if k == n + 1 else "back" if k == n - 1 else "seek", k)
        # until the answer, the label names the step shown and where it goes, never a step not computed
        # (the slider's maximum of an unfinished output is its budget, not its length)
        c, st = self.win.controls, vm.state
        going = "the end" if k >= c.slider.maximum() and not st.finished else f"step {k}"
        c.label.setText(f"step {vm.step} / {vm.n_steps if st.finished else '…'} → {going} …")

    def refuse_step(self) -> None:
        self.win.status.showMessage(WAIT_MESSAGE, 4000)

    def on_reference_edited(self, text: str) -> None:
        """The Reference box changed: once it is empty while the view on screen (or being computed)
        is teacher forcing, go back to free decoding of the sentence, as other input changes
        re-translate once a first result exists (``inputs.auto_translate``)."""
        inputs = self.win.inputs
        if text.strip() or not inputs.auto_translate or not inputs.text.text().strip():
            return
        req = self.pending[1] if self.pending is not None else self.shown_request
        if req.reference if req is not None else self.vm.teacher_forced:
            self.win.translate()

    # ---------- the translation requests ----------
    def request_sent(self, job: int, req: TranslateRequest) -> None:
        """The window sent translation ``job``: hold the step controls until it is answered."""
        self.pending = (job, req)
        self.win.controls.set_held(True)
        self.win.set_computing(True)

    def request_answered(self, job: int) -> None:
        """Translation ``job``'s result is on screen."""
        if self.pending is not None and self.pending[0] == job:
            self.shown_request = self.pending[1]
            self.pending = None
            self.win.controls.set_held(False)

    def request_dropped(self, job: int, cancelled: bool) -> tuple[str, int] | None:
        """Translation ``job`` failed, was superseded or was cancelled: release the controls. A
        cancelled one (Cancel) puts the settings back to the result on screen (see
        :meth:`restore_settings`); returns the status message that says so, or None."""
        if self.pending is None or self.pending[0] != job:
            return None
        self.pending = None
        self.win.controls.set_held(False)
        return self.restore_settings() if cancelled else None

    def restore_settings(self) -> tuple[str, int] | None:
        """After Cancel the result on screen stays, so the inputs that describe it go back to it,
        without re-translating: decoding and k (a live result), pad-to, the causal switch (teacher
        forcing). They were changed by one click and re-translated by themselves, so Cancel undoes
        that click. Typed text (Korean, reference, batch with) is kept: throwing typed work away
        would be worse; the message says it is not what is shown (it stays until replaced)."""
        shown, r = self.shown_request, self.vm.result
        if shown is None or r is None:
            return None
        inputs, now = self.win.inputs, self.win.current_request()
        back: list[str] = []
        auto, inputs.auto_translate = inputs.auto_translate, False  # putting them back must not re-translate
        self.reference.causal_off.blockSignals(True)
        try:
            if self.vm.live and now.strategy != shown.strategy:
                inputs.set_strategy(shown.strategy)
                back.append(str(shown.strategy) if not shown.strategy.is_beam else f"beam k = {shown.beam}")
            if now.pad_to != shown.pad_to:
                inputs.pad_to.setValue(shown.pad_to or 0)
                back.append(f"pad-to {shown.pad_to or 'off'}")
            if self.vm.teacher_forced and now.causal != r.causal:
                self.reference.causal_off.setChecked(not r.causal)
                self.causal = r.causal
                back.append(f"causal mask {'on' if r.causal else 'OFF'}")
        finally:
            inputs.auto_translate = auto
            self.reference.causal_off.blockSignals(False)
        edited = [
            name
            for name, a, b in (
                ("Korean text", now.text, shown.text),
                ("reference", now.reference, shown.reference),
                ("batch-with sentence", now.batch_with, shown.batch_with),
            )
            if (a or "").strip() != (b or "").strip()
        ]
        if not back and not edited:
            return None
        parts = ["translation cancelled; the result on screen stays"]
        if back:
            parts.append("its settings are back: " + ", ".join(back))
        if edited:
            parts.append(
                f"the {' and the '.join(edited)} you edited {'is' if len(edited) == 1 else 'are'} not the "
                "result shown (Enter translates it)"
            )
        return "; ".join(parts), 0 if edited else 10000

    def set_causal(self, on: bool) -> None:
        self.causal = on
        if self.vm.teacher_forced:
            self.win.translate()

    def set_show_full(self, on: bool) -> None:
        self.vm.set_show_full(on)
        if on and self.vm.live and self.vm.state.final is None:
            self.win.translate()  # the worker computes the full output once, then stays at step 0
        self.win.redraw()

    def show_batch(self, i: int) -> None:
        if self.vm.state is not None and self.vm.state.batch:
            self.vm.set_batch_index(i)
            self.sync()
            self.win.redraw()

    # ---------- results ----------
    def sync(self) -> None:
        """Slider range and value from the view model, without re-emitting (Play keeps running)."""
        c = self.win.controls
        c.slider.blockSignals(True)
        c.slider.setRange(0, self.vm.slider_max)
        c.slider.setValue(self.vm.step)
        c.slider.blockSignals(False)
        c.label.setText(f"step {self.vm.step} / {self.vm.n_steps if self.vm.state.finished else '…'}")
        if c.timer.isActive() and self.vm.state.finished and self.vm.step >= self.vm.n_steps:
            c.stop()

    def update_panels(self) -> None:
        for p in (self.fork, self.reference, self.beam, self.bar):
            p.update_from(self.vm)
