"""Wires the step controls, the experiment panels and the worker's live decoder to the view model.

Live (greedy or beam): Step ▶ sends ``step`` (exactly one decoder step on the KV cache), ◀ Back
sends ``back`` (``DecodeSession.back()``; from the end of a fork it returns to the fork point),
Play steps on the timer, the slider and Reset / Run to end send ``seek k``. Complete results
(teacher forcing, a batch) are revealed locally without the model.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from gui.panels.experiments import BeamPanel, ExperimentBar, ForkPanel, ReferencePanel
from gui.state.view_model import ViewModel
from gui.workers.model_worker import TRANSLATE


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
        self.request_command.connect(win.worker.command)
        win.controls.position_changed.connect(self.on_position)
        win.topk.clicked.connect(self.force_candidate)
        self.fork.force_word.connect(lambda text: self.send("force_word", (self.fork_step(), text)))
        self.fork.unfork.connect(lambda: self.send("unfork", None))
        self.beam.path_clicked.connect(lambda ids, done: self.send("path", (ids, done)))
        self.reference.causal_toggled.connect(self.set_causal)
        self.bar.batch_index_changed.connect(self.show_batch)
        self.bar.show_full_changed.connect(self.set_show_full)

    # ---------- commands ----------
    def send(self, name: str, arg) -> None:
        if not self.vm.live:
            self.win.status.showMessage("not live: this needs greedy or beam decoding of one sentence", 5000)
            return
        # each command is a request of its own: Cancel drops it (and any waiting behind it) but not
        # the sentence; answers to superseded commands are ignored by the window
        job = self.win.worker.jobs.start(TRANSLATE, supersede=False)
        self.request_command.emit(job, name, arg)

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
        if not vm.live:
            vm.set_step(k)
            self.win.redraw()
            return
        n = len(vm.result.steps)
        if k == n:
            return
        self.send("step" if k == n + 1 else "back" if k == n - 1 else "seek", k)

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
