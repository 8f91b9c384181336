"""The "Learn" tab: train a small Transformer on a toy task and watch its attention form.

Training runs in a :class:`gui.workers.learn_worker.LearnWorker` on its own thread (jobs of the
queue "learn" on the app's job board); the tab keeps every snapshot it sends (update, losses,
accuracy, alignment and the probe pair's maps), draws the newest as it arrives and lets a slider
replay them (step 0 → the last). Pause (or the window's Cancel) stops the run before its next
update and keeps it; Resume goes on; Step makes one update; Reset and Train start a new run from
the settings shown (a run that cannot be built, e.g. a bad pairs file, is reported and the current
one stays). Closing the window stops the training before its next update and ends the thread.
"""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtWidgets

from core.errors import StudioError
from core.training.live_session import LiveSettings
from gui.export.learn_frames import FrameWriter, write_gif
from gui.panels.context import Panel, PanelContext
from gui.panels.learn_controls import LearnControls
from gui.widgets.learn_view import LearnView
from gui.widgets.strips import PopOut
from gui.workers.learn_worker import LEARN, LearnSpec, LearnWorker
from gui.workers.threads import WorkerThread

ERROR_STYLE = "color: #b00020;"


class LearnPanel(QtWidgets.QWidget, Panel):
    """The tab. ``snapshots``: the current run's, in order; ``slider`` picks the one drawn by
    ``view`` (:class:`LearnView`). ``base``: the settings the controls do not show (batch size,
    d_ff …); ``seed``: the run's seed. ``training``: the id of the running training job, or None."""

    request_build = QtCore.Signal(int, object)
    request_train = QtCore.Signal(int, int, int)
    request_step = QtCore.Signal(int)

    name = "learn"
    tab_title = "Learn"
    lazy_tab_titles = ("Learn",)

    def __init__(self, ctx: PanelContext) -> None:
        super().__init__()
        self.ctx, self.jobs = ctx, ctx.worker.jobs
        self.base, self.seed, self.pairs_path = LiveSettings(), 0, None
        self.snapshots: list = []
        self.run_job, self.training, self.what = 0, None, ""
        self.chosen: tuple[int, int] | None = None
        self.exporting: FrameWriter | None = None
        self.controls = c = LearnControls(self.base)
        self.status = QtWidgets.QLabel("Choose a task and press Train.")
        self.status.setWordWrap(True)
        self.view = LearnView(ctx.style.cmap, ctx.style.font)
        self.slider = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
        self.slider.setEnabled(False)
        self.where = QtWidgets.QLabel("no snapshot yet")
        scrub = QtWidgets.QHBoxLayout()
        scrub.addWidget(QtWidgets.QLabel("snapshot"))
        scrub.addWidget(self.slider, 1)
        scrub.addWidget(self.where)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(c)
        layout.addWidget(self.status)
        layout.addWidget(self.view, 1)
        layout.addLayout(scrub)
        self.worker = LearnWorker(self.jobs)
        self.thread = WorkerThread(self.worker, self)
        self.request_build.connect(self.worker.build)
        self.request_train.connect(self.worker.train)
        self.request_step.connect(self.worker.step)
        self.worker.built.connect(self._on_built)
        self.worker.snapshot.connect(self._on_snapshot)
        self.worker.stopped.connect(self._on_stopped)
        self.worker.failed.connect(self._on_failed)
        b = c.buttons
        for name, slot in (("train", self.train), ("pause", self.pause), ("resume", self.resume), ("step", self.step)):
            b[name].clicked.connect(slot)
        b["reset"].clicked.connect(self.reset)
        b["export"].clicked.connect(self.choose_export)
        self.popout = PopOut(ctx.tabs, self, self.tab_title)
        b["detach"].clicked.connect(self.popout.toggle)
        c.task.activated.connect(self._task_chosen)
        c.kind.currentIndexChanged.connect(lambda _: self.redraw())
        c.follow_best.toggled.connect(lambda _: self.redraw())
        self.view.clicked.connect(self._cell_clicked)
        self.slider.valueChanged.connect(self.show_index)
        ctx.style.changed.connect(self._restyle)
        c.set_running(False, False)
        self.thread.start()

    def tabs(self) -> list:
        return [(self, self.tab_title)]

    # ---------- requests ----------
    def spec(self) -> LearnSpec:
        task = self.controls.task_name
        return LearnSpec(task, self.controls.settings(self.base), self.seed, self.pairs_path if task == "file" else None)

    def _send_build(self) -> int:
        job = self.jobs.start(LEARN)  # stops a running training before its next update
        self.request_build.emit(job, self.spec())
        self._say("building the model and evaluating update 0 …")
        return job

    def _send_train(self, supersede: bool = True) -> int:
        self.training = job = self.jobs.start(LEARN, supersede=supersede)
        self.request_train.emit(job, self.controls.every.value(), self.controls.until.value())
        self._busy(True)
        return job

    def train(self) -> int:
        """A new run from the settings shown, trained until the last update; returns the training job."""
        self._send_build()
        return self._send_train(supersede=False)  # runs after the build, on the same thread

    def resume(self) -> int:
        """Go on training the current run (a new one if there is none)."""
        return self._send_train() if self.snapshots else self.train()

    def pause(self) -> None:
        """Stop training before the next update; the updates made so far are evaluated and kept."""
        if self.training is not None:
            self.jobs.cancel(LEARN)
            self._say("pausing after this update …")

    def cancel(self) -> None:
        """The window's Cancel: as Pause."""
        self.pause()

    def step(self) -> int:
        """One update of the current run (built first if there is none), then a snapshot."""
        if not self.snapshots:
            self._send_build()
        job = self.jobs.start(LEARN, supersede=bool(self.snapshots))
        self.training = None
        self._busy(False)
        self.request_step.emit(job)
        return job

    def reset(self) -> int:
        """Back to update 0 with the settings shown (the snapshots are dropped once it is built)."""
        self.training = None
        self._busy(False)
        return self._send_build()

    def set_pairs_file(self, path: str | Path) -> None:
        """Use the TSV ``path`` for "pairs from a file…" (checked when the run is built)."""
        self.pairs_path = str(path)
        self.controls.task.setCurrentIndex(self.controls.task.findData("file"))

    def _task_chosen(self, _index: int) -> None:
        if self.controls.task_name == "file":
            title, kinds = "Pairs (source<TAB>target, one a line)", "TSV (*.tsv *.txt);;All (*)"
            path, _ = QtWidgets.QFileDialog.getOpenFileName(self, title, "", kinds)
            if path:
                self.set_pairs_file(path)

    # ---------- answers (GUI thread) ----------
    @QtCore.Slot(int, str, object)
    def _on_built(self, job: int, what: str, snap) -> None:
        self.run_job, self.what, self.snapshots = job, what, [snap]
        self._follow()
        self._say(f"{what}: update 0 evaluated.")

    @QtCore.Slot(int, object)
    def _on_snapshot(self, job: int, snap) -> None:
        if job <= self.run_job or not self.snapshots:
            return  # from a run replaced since
        self.snapshots.append(snap)
        self._follow()

    @QtCore.Slot(int, str)
    def _on_stopped(self, job: int, why: str) -> None:
        if job != self.training:
            return
        self.training = None
        self._busy(False)
        last = self.snapshots[-1].updates if self.snapshots else 0
        if why in ("until", "paused"):
            self._say(f"reached update {last}." if why == "until" else f"paused at update {last}: Resume goes on.")

    @QtCore.Slot(int, str)
    def _on_failed(self, job: int, reason: str) -> None:
        if self.training is not None and self.training > job:  # the worker drops the training queued after
            self.training = None
            self._busy(False)
        kept = " The current run is kept." if self.snapshots else ""
        self._say(f"⚠ {reason}{kept}", error=True)

    # ---------- drawing ----------
    def _follow(self) -> None:
        """Show the newest snapshot if the slider was at the end (a lecturer scrubbing back stays)."""
        at_end = self.slider.value() >= self.slider.maximum()
        self.slider.blockSignals(True)
        self.slider.setRange(0, len(self.snapshots) - 1)
        if at_end or self.view.shown is None or self.slider.value() >= len(self.snapshots):
            self.slider.setValue(len(self.snapshots) - 1)
        self.slider.blockSignals(False)
        self.slider.setEnabled(len(self.snapshots) > 1)
        self.show_index(self.slider.value())

    def show_index(self, i: int) -> None:
        """Draw snapshot ``i`` (the slider's value)."""
        if not 0 <= i < len(self.snapshots):
            return
        c = self.controls
        self.view.show_snapshot(self.snapshots, i, c.kind.currentData(), self.chosen, c.follow_best.isChecked(), self.what)
        self.where.setText(f"{i + 1}/{len(self.snapshots)} · update {self.snapshots[i].updates}")
        c.set_running(self.training is not None, True)

    def redraw(self) -> None:
        self.show_index(self.slider.value())

    def _cell_clicked(self, key) -> None:
        self.chosen = tuple(key)
        self.controls.follow_best.setChecked(False)  # redraws
        self.redraw()

    def _restyle(self) -> None:
        self.view.set_colormap(self.ctx.style.cmap)
        self.view.set_font(self.ctx.style.font)
        self.redraw()

    def set_colormap(self, cmap) -> None:
        self.view.set_colormap(cmap)
        self.redraw()

    def _say(self, text: str, error: bool = False) -> None:
        self.status.setStyleSheet(ERROR_STYLE if error else "")
        self.status.setText(text)

    def _busy(self, on: bool) -> None:
        self.ctx.set_busy(on, LEARN)
        self.controls.set_running(on, bool(self.snapshots))

    # ---------- export ----------
    def choose_export(self) -> None:
        out = QtWidgets.QFileDialog.getExistingDirectory(self, "Folder for the frames and the GIF")
        if out:
            self.export(out)

    def export(self, out: str | Path) -> None:
        """Write the snapshots as PNG frames and a GIF into ``out``, one frame per event-loop turn
        (the tab keeps painting); the status line says where they went, or why not."""
        try:
            self.exporting = FrameWriter(self.snapshots, out, self.ctx.style.cmap, self.ctx.style.font, self.what)
        except (OSError, ValueError) as exc:
            self._say(f"⚠ {exc}", error=True)
            return
        self._export_next(0)

    def _export_next(self, i: int) -> None:
        w = self.exporting
        try:
            if i < len(w):
                w.write(i)
                self._say(f"exporting frame {i + 1}/{len(w)} …")
                QtCore.QTimer.singleShot(0, self, lambda: self._export_next(i + 1))
                return
            gif = write_gif(w.paths, w.out / "learning.gif")
            self._say(f"wrote {len(w.paths)} frames and {gif}")
        except (OSError, StudioError) as exc:  # a disk or Pillow problem: said, never raised into Qt
            self._say(f"⚠ export stopped: {exc}", error=True)
        w.close()
        self.exporting = None

    def stop(self) -> None:
        """The window closes: stop the training before its next update and end the thread."""
        self.jobs.cancel(LEARN)
        self.thread.stop()


__all__ = ["LearnPanel"]
