"""A lecture's learn step in the window: the Learn tab trains the step's toy run (its worker thread,
jobs of the queue "learn"; no second training loop) and the step shows the probe pair's
cross-attention snapshot by snapshot, in Present mode on its map and in the main window in the Learn
tab (which :class:`LearnStepRunner` brings to the front).

What a lecturer gets (docs/lectures.md, "Learn steps"):

- arriving at the step starts training from the step's seed; each snapshot is drawn as it arrives,
  the heading counting "update 150 / 800";
- arriving again at a step whose run the Learn tab still holds replays it from update 0 to the
  end, one snapshot every :data:`PLAY_MS` ms (a run left half-way goes on training instead);
- ↓ / ↑ in Present mode (the Learn tab's slider in the main window) scrub the snapshots and stop
  the replay;
- leaving the step while it trains pauses the run before its next update (the window's Cancel
  does the same): nothing else trains behind the next step, and the updates made are kept.
"""

from __future__ import annotations

import dataclasses

from PySide6 import QtCore

from core.training.live_session import LiveSettings
from gui.state.lecture import Lecture, LectureStep
from gui.state.lecture_learn_pages import learn_frame, learn_page
from gui.state.lecture_pages import Page
from gui.window.lecture_screen import PRESENT_HELP

PLAY_MS = 500  # a replay shows each snapshot this long (as the exported GIF does)
LEARN_HELP = "→ ← / PgDn PgUp lecture step · ↓ ↑ snapshot · Esc leave"


class LearnStepRunner(QtCore.QObject):
    """Runs learn steps on ``win``'s Learn tab. ``step`` is the learn step shown (None: none);
    ``failure`` the reason its run failed, if it did.

    Signals: ``changed()`` — a snapshot arrived, the one shown changed, or the run failed."""

    changed = QtCore.Signal()

    def __init__(self, win) -> None:
        super().__init__(win)
        self.win = win
        self.step: LectureStep | None = None
        self.failure: str | None = None
        self.runs: dict[tuple, int] = {}  # the run of a step (task, updates, every, seed) -> its build job
        self.job: int | None = None  # the training job this runner started last
        self._panel = None
        self._play = QtCore.QTimer(self)
        self._play.setInterval(PLAY_MS)
        self._play.timeout.connect(self._tick)
        self._redraw_soon = False
        win.vm.subscribe(self._vm_changed)

    # ---------- the Learn tab ----------
    @property
    def panel(self):
        """The Learn tab (built on first use)."""
        if self._panel is None:
            p = self._panel = self.win.slots.get("learn")
            p.worker.built.connect(self._on_answer)
            p.worker.snapshot.connect(self._on_answer)
            p.worker.stopped.connect(self._on_answer)
            p.worker.failed.connect(self._on_failed)
            p.slider.valueChanged.connect(self._on_answer)
        return self._panel

    @property
    def ours(self) -> bool:
        """True when the Learn tab holds the shown step's run."""
        step = self.step
        return step is not None and self.runs.get(step.learn.run) == self.panel.run_job and bool(self.panel.snapshots)

    @property
    def snapshots(self) -> list:
        """The shown step's snapshots so far (empty before its run is built)."""
        return list(self.panel.snapshots) if self.ours else []

    @property
    def index(self) -> int:
        """The snapshot shown (-1: none)."""
        return self.panel.slider.value() if self.ours else -1

    @property
    def complete(self) -> bool:
        """True once the run reached the step's last update."""
        snaps = self.snapshots
        return bool(snaps) and snaps[-1].updates >= self.step.learn.updates

    # ---------- arriving, leaving ----------
    def start(self, step: LectureStep, replay: bool = True) -> None:
        """Show learn step ``step``: set the Learn tab to its run (task, the default settings, seed,
        snapshot interval, last update, the head to enlarge), then train it, go on training it, or
        (``replay``) play back the finished run from update 0."""
        part = step.learn
        self.leave()
        self.step, self.failure = step, None
        p = self.panel
        c = p.controls
        c.task.setCurrentIndex(c.task.findData(part.task))
        d = LiveSettings()
        p.base = dataclasses.replace(d)
        c.layers.setValue(d.layers)
        c.heads.setValue(d.n_heads)
        c.d_model.setValue(d.d_model)
        c.lr.setValue(d.peak_lr)
        c.causal.setChecked(d.causal)
        c.every.setValue(part.every)
        c.until.setValue(part.updates)
        c.kind.setCurrentIndex(c.kind.findData("cross"))
        p.chosen = None if part.layer is None or part.head is None else (part.layer - 1, part.head - 1)
        c.follow_best.setChecked(part.follow_best)
        tabs = self.win.live.tabs
        if tabs.indexOf(p) >= 0:
            tabs.setCurrentWidget(p)
        if self.ours and self.complete:
            if replay and len(p.snapshots) > 1:
                p.slider.setValue(0)
                self._play.start()
            else:
                p.slider.setValue(len(p.snapshots) - 1)
        elif self.ours:
            self.job = p.resume()  # (leave() cancelled a training of this run: a new job goes on after it stops)
        else:
            p.seed = part.seed
            self.job = p.train()
            self.runs[part.run] = self.job - 1  # the build job: the training job follows it on the same queue
        self.changed.emit()

    def leave(self) -> None:
        """Leave the step: stop a replay, and a training run of the step before its next update (or
        its build and the training queued after it, when the model is still being built)."""
        self._play.stop()
        if self.step is not None and self._panel is not None and self.job is not None and self.panel.training == self.job:
            self.panel.pause()
        pw = getattr(self.win, "present_window", None)
        if self.step is not None and pw is not None:
            pw.help.setText(PRESENT_HELP)
        self.step = None

    # ---------- scrubbing ----------
    def scrub(self, delta: int) -> None:
        """Show the snapshot ``delta`` later (earlier when negative); stops a replay."""
        self._play.stop()
        if self.ours:
            s = self.panel.slider
            s.setValue(max(0, min(s.value() + delta, len(self.panel.snapshots) - 1)))

    def _tick(self) -> None:
        s = self.panel.slider
        if not self.ours or s.value() >= s.maximum():
            self._play.stop()
            return
        s.setValue(s.value() + 1)

    @property
    def playing(self) -> bool:
        """True while a finished run is replayed."""
        return self._play.isActive()

    # ---------- what is shown ----------
    def page(self, lecture: Lecture) -> Page:
        """The shown step's page at the snapshot shown."""
        return learn_page(lecture, self.step, self.snapshots, self.index)

    def draw_present(self, page: Page) -> None:
        """Put the snapshot's map and the probe line on Present mode's map, if it is open."""
        pw = getattr(self.win, "present_window", None)
        if pw is None or not pw.isVisible() or self.step is None:
            return
        snaps, i = self.snapshots, self.index
        pw.caption.setText(page.sentence or page.drawn)
        pw.help.setText(LEARN_HELP)
        if not 0 <= i < len(snaps):
            pw.heatmap.set_empty("building the model …")
            return
        f = learn_frame(self.step, snaps[i])
        pw.heatmap.set_colormap(self.win.cmap)
        pw.heatmap.set_matrix(f.matrix, None, f.map.row_tokens, f.map.col_tokens, f.short_title, f.map.row_label, f.map.col_label)

    # ---------- answers ----------
    def _on_answer(self, *_) -> None:
        if self.step is not None:
            self.changed.emit()

    def _on_failed(self, job: int, reason: str) -> None:
        if self.step is not None and job >= self.runs.get(self.step.learn.run, 0):
            self.failure = reason
            self.changed.emit()

    def _vm_changed(self) -> None:
        """The translation shown changed (Present mode redrew it): the learn map goes back on top."""
        if self.step is not None and not self._redraw_soon:
            self._redraw_soon = True
            QtCore.QTimer.singleShot(0, self, self._redraw)

    def _redraw(self) -> None:
        self._redraw_soon = False
        self._on_answer()

    def detach(self) -> None:
        """Stop following the window (the lecture closes)."""
        self.leave()
        self.win.vm.unsubscribe(self._vm_changed)


__all__ = ["PLAY_MS", "LearnStepRunner"]
