"""Lectures in the window: apply a lecture step (:mod:`gui.state.lecture`) to the main window with
the live model and step through the lecture with a presenter's clicker (the inputs a step fills:
:mod:`gui.window.lecture_inputs`; its texts on the lecture bar and in Present mode:
:mod:`gui.window.lecture_screen`; the deck, every step rendered to files: :mod:`gui.window.lecture_deck`).

Applying a step goes through the window's own controls and worker, as a person would: the inputs
are filled, Translate runs, the live decoder seeks to the step (``force`` forks it first), the
view and head are selected, and ``ablate`` / ``query`` run in the Ablate heads / Inside one step
tabs. :class:`LectureDriver` does this as a chain of actions, each waiting for the window's answer
(never blocking the GUI thread); ``shown(index)`` says when the step is on screen.

A learn step (``learn = "reverse"``) trains the Learn tab's toy run instead and shows its
cross-attention snapshot by snapshot (:mod:`gui.window.lecture_learn`).

Keys (``main.py --lecture FILE`` opens Present mode): → / Page Down next lecture step, ← / Page Up
previous (what presenter clickers send), ↓ / ↑ one decoder step forward / back; in the main window
Page Down / Page Up (the arrows keep stepping the decoder there).
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtWidgets

from core.errors import StudioError
from gui.state import view_kinds
from gui.state.lecture import Lecture, LectureStep
from gui.state.lecture_check import check_lecture
from gui.state.lecture_pages import Page, ablation_note, inside_note, page_of, result_note
from gui.window.lecture_inputs import fill_inputs, select_view
from gui.window.lecture_learn import LearnStepRunner
from gui.window.lecture_screen import LectureScreen

NEXT_KEYS = (QtCore.Qt.Key.Key_Right, QtCore.Qt.Key.Key_PageDown)
PREVIOUS_KEYS = (QtCore.Qt.Key.Key_Left, QtCore.Qt.Key.Key_PageUp)


# ---------------------------------------------------------------------------------------------- the driver


class LectureDriver(QtCore.QObject):
    """Steps ``win`` (a MainWindow) through ``lecture``. ``index`` is the step shown (0-based,
    -1 before the first), ``page`` its :class:`Page`, ``done`` whether it is fully on screen.
    ``interactive``: keys (an application event filter), the lecture bar above the main window,
    Present mode's caption, and the first step once a model is loaded; the deck renderer turns
    these off and calls :meth:`go` itself.

    Signals: ``shown(int)`` — step ``index`` is on screen (or its problem is, as its caption).
    """

    shown = QtCore.Signal(int)

    def __init__(self, win, lecture: Lecture, interactive: bool = True) -> None:
        super().__init__(win)
        self.win, self.lecture, self.interactive = win, lecture, interactive
        self.index = -1
        self.page: Page | None = None
        self.done = False
        self.note = ""
        self._chain = None
        self._wait = None
        self._job: int | None = None
        self._failure: str | None = None
        self._answers = 0
        self._scheduled = False
        self._poll = QtCore.QTimer(self)  # a safety net beside the events below
        self._poll.setInterval(50)
        self._poll.timeout.connect(self._resume)
        win.vm.subscribe(self._poke)
        win.worker.failed.connect(self._on_failed)
        win.worker.cancelled.connect(self._on_cancelled)
        win.worker.computed.connect(self._on_computed)
        win.worker.compute_failed.connect(self._on_computed)
        win.analysis.answered.connect(self._on_answered)
        self.learning = LearnStepRunner(win)  # learn steps: the Learn tab's run, snapshot by snapshot
        self.learning.changed.connect(self._on_learning)
        self.screen = self.bar = self.bar_label = None
        if interactive:
            win.worker.loaded.connect(self._on_loaded)
            QtWidgets.QApplication.instance().installEventFilter(self)
            self.screen = LectureScreen(win, lecture.title, self.previous, self.next)
            self.bar, self.bar_label = self.screen.bar, self.screen.bar_label

    # ---------- stepping ----------
    @property
    def step(self) -> LectureStep | None:
        """The lecture step shown (None before the first)."""
        return self.lecture.steps[self.index] if 0 <= self.index < len(self.lecture.steps) else None

    def next(self) -> None:
        """The next lecture step (stays on the last)."""
        self.go(min(self.index + 1, len(self.lecture.steps) - 1))

    def previous(self) -> None:
        """The previous lecture step (stays on the first)."""
        self.go(max(self.index - 1, 0))

    def go(self, index: int) -> None:
        """Show lecture step ``index`` (0-based): a step with problems shows them as its caption
        and runs nothing; otherwise the chain of actions starts (``shown`` when it is on screen)."""
        if not 0 <= index < len(self.lecture.steps):
            raise IndexError(f"the lecture has steps 1..{len(self.lecture.steps)}")
        self.index, self.done, self.note = index, False, ""
        self.learning.leave()  # a run still training for the step left stops before its next update
        self._failure, self._wait, self._job = None, None, None
        step = self.lecture.steps[index]
        ckpt = self.win.worker.checkpoint
        if ckpt is not None:
            check_lecture(self.lecture, ckpt.config)
        if not step.ok:
            self._chain = None
            self._finish()
            return
        self._chain = self._learn(step) if step.learn is not None else self._apply(step)
        self._show_progress(step)
        self._poll.start()
        self._advance()

    # ---------- the chain ----------
    def _apply(self, step: LectureStep):
        """The actions of one step; each ``yield`` hands back a condition to wait for."""
        win = self.win
        fill_inputs(win, step)
        select_view(win, step)
        before = win.vm.state
        self._job = win.translate()
        yield lambda: win.vm.state is not before
        if step.live:
            if step.force is not None:
                yield from self._command("seek", 10**9)
                yield from self._command("force_word", (step.force_at, step.force))
            target = 10**9 if step.decoder_step is None else step.decoder_step
            if not (win.vm.step == target or (target > win.vm.step and win.vm.state.finished)):
                yield from self._command("seek", target)
        else:
            n = win.vm.n_steps
            win.controls.set_position(n if step.decoder_step is None else min(step.decoder_step, n))
        select_view(win, step)
        notes = [result_note(win.vm, step)]
        if step.decoder_step is not None and step.decoder_step > win.vm.step:
            notes.append(f"(the output ends after {win.vm.step} steps: shown at step {win.vm.step}, not {step.decoder_step})")
        if step.ablate is not None:
            notes.append((yield from self._ablate(step)))
        if step.query is not None:
            notes.append((yield from self._inside(step)))
        self.note = "\n".join(n for n in notes if n)

    def _learn(self, step: LectureStep):
        """A learn step: its run trains (or, in the hall, a finished one replays) until its last update."""
        self.learning.start(step, replay=self.interactive)
        yield lambda: self.learning.failure is not None or self.learning.complete
        if self.learning.failure is not None:
            raise ValueError(f"lecture step {step.number}, learn: {self.learning.failure}")

    def _on_learning(self) -> None:
        """The learn step's run moved on (a snapshot, a scrub): its page and map follow."""
        step = self.step
        if step is None or step.learn is None or self.learning.step is not step:
            return
        self.page = self.learning.page(self.lecture)
        if self.screen is not None:
            self.screen.show(self.page)
            self.learning.draw_present(self.page)
        self._poke()

    def _command(self, name: str, arg):
        win = self.win
        before = win.vm.state
        win.live.send(name, arg)
        self._job = win.request_id
        yield lambda: win.vm.state is not before

    def _ablate(self, step: LectureStep):
        win = self.win
        p = win.analysis.ablation
        win.live.tabs.setCurrentWidget(p)
        p.kind.setCurrentIndex(p.kind.findData(step.ablate_kind))
        p.heads.setText(step.ablate)
        p.sync_boxes(step.ablate)
        old, answers = p.report, self._answers
        win.analysis.ablate()
        yield lambda: self._answers > answers
        if p.report is old or p.report is None:
            raise ValueError(f"lecture step {step.number}, ablate: {p.status.text().lstrip('⚠ ')}")
        return ablation_note(p.report.result)

    def _inside(self, step: LectureStep):
        win = self.win
        ip = win.inside_panel
        win.live.tabs.setCurrentWidget(ip)
        ip.refresh()
        if step.query > ip.query.maximum():
            raise ValueError(
                f"lecture step {step.number}, query: {step.query} is out of range 1..{ip.query.maximum()} "
                "for this map (one query per row)"
            )
        ip.query.setValue(step.query)
        ip.refresh()
        row = np.asarray(win.vm.frame().view.weights[step.layer - 1, step.head - 1, step.query - 1])
        want = (view_kinds.get(step.view).core_kind, step.layer, step.head, step.query)

        def ready() -> bool:
            st = ip.step
            if ip.message.text().startswith("⚠"):
                return True
            return (
                st is not None
                and (st.kind, st.layer, st.head, st.query) == want
                and ip.heatmap_row is not None
                and np.array_equal(ip.heatmap_row, row)
            )

        yield ready
        if ip.step is None or ip.message.text().startswith("⚠"):
            raise ValueError(f"lecture step {step.number}, query: {ip.message.text().lstrip('⚠ ')}")
        return inside_note(ip.step)

    def _advance(self) -> None:
        """Run the chain until it waits for something not there yet, or ends."""
        while self._chain is not None:
            if self._failure is not None:
                self._chain = None
                self._finish(self._failure)
                return
            if self._wait is not None and not self._wait():
                return
            try:
                self._wait = next(self._chain)
            except StopIteration:
                self._chain = None
                self._finish()
                return
            except (StudioError, ValueError) as exc:
                self._chain = None
                self._finish(str(exc))
                return

    def _resume(self) -> None:
        self._scheduled = False
        self._advance()

    def _poke(self) -> None:
        """Something changed (view model, a worker answer): look again once the slot that
        changed it has finished (never in the middle of the window's own update)."""
        if self._chain is not None and not self._scheduled:
            self._scheduled = True
            QtCore.QTimer.singleShot(0, self, self._resume)

    @QtCore.Slot(int, str)
    def _on_failed(self, request_id: int, reason: str) -> None:
        if self._chain is not None and request_id == self._job:
            self._failure = f"lecture step {self.index + 1}: {reason}"
            self._poke()

    @QtCore.Slot(int)
    def _on_cancelled(self, request_id: int) -> None:
        if self._chain is not None and request_id == self._job:
            self._failure = f"lecture step {self.index + 1}: the model's run was cancelled"
            self._poke()

    def _on_computed(self, *_) -> None:
        self._poke()

    def _on_answered(self, _panel: str) -> None:
        self._answers += 1
        self._poke()

    def detach(self) -> None:
        """Stop following the window (its view model, keys); the window keeps what it shows."""
        self._chain = None
        self._poll.stop()
        self.learning.detach()
        self.win.vm.unsubscribe(self._poke)
        if self.interactive:
            QtWidgets.QApplication.instance().removeEventFilter(self)

    def _on_loaded(self, ckpt) -> None:
        problems = check_lecture(self.lecture, ckpt.config)
        if problems:
            self.win.status.showMessage(f"the lecture has {len(problems)} problem(s); the first: {problems[0]}")
        self.go(max(self.index, 0))  # the first step, or the step shown again on the new model

    def _finish(self, error: str = "") -> None:
        self._poll.stop()
        step = self.lecture.steps[self.index]
        if step.learn is not None and not error and self.learning.step is step:
            self.page = self.learning.page(self.lecture)
        else:
            self.page = page_of(self.lecture, step, None if error else self.win.vm, self.note, error)
        self.done = True
        self.show_page()
        self.shown.emit(self.index)

    # ---------- what the audience sees ----------
    def _show_progress(self, step: LectureStep) -> None:
        self.page = page_of(self.lecture, step, None, "", "")
        self.page.caption = ""  # the step's caption waits for its own map (the previous one is still drawn)
        self.page.drawn = "running the model …"
        self.show_page()

    def show_page(self) -> None:
        """Put the current page's heading and caption on the lecture bar and in Present mode."""
        if self.screen is not None and self.page is not None:
            self.screen.show(self.page)
            if self.learning.step is not None:  # after Present mode's own redraw (a resize, a new window)
                QtCore.QTimer.singleShot(0, self, self._on_learning)

    def eventFilter(self, obj, ev) -> bool:
        """Clicker keys: in Present mode → ← PgDn PgUp step the lecture and ↓ ↑ the decoder; in
        the main window PgDn PgUp step the lecture."""
        kind = ev.type()
        if self.screen is not None and obj is getattr(self.win, "present_window", None):
            if kind == QtCore.QEvent.Type.Show:
                self.screen.decorate()
                self.show_page()
            if kind == QtCore.QEvent.Type.Resize and obj.size() != self.screen.fitted_size:
                self.show_page()  # the note's size fits the width and height
        if kind != QtCore.QEvent.Type.KeyPress or not isinstance(obj, QtWidgets.QWidget):
            return False
        top = obj.window()
        present = top is getattr(self.win, "present_window", None) and top is not None
        key = ev.key()
        if present or top is self.win:
            keys = QtCore.Qt.Key
            if key in NEXT_KEYS and (present or key == keys.Key_PageDown):
                self.next()
                return True
            if key in PREVIOUS_KEYS and (present or key == keys.Key_PageUp):
                self.previous()
                return True
            if present and self.learning.step is not None and key in (keys.Key_V, keys.Key_L, keys.Key_H, keys.Key_M):
                return True  # no translation view on a learn step: the keys would redraw a hidden one
            if present and self.learning.step is not None and key in (keys.Key_Down, keys.Key_Up):
                self.learning.scrub(1 if key == keys.Key_Down else -1)
                return True
            if present and key in (keys.Key_Down, keys.Key_Up):
                c = self.win.controls
                c.set_position(c.position + (1 if key == keys.Key_Down else -1))
                return True
        return False


def open_lecture(win, lecture: Lecture, present: bool = True) -> LectureDriver:
    """Put ``lecture`` on ``win``: the lecture bar, the clicker keys, Present mode (``present``);
    the first step is shown once a model is loaded (at once when one is already)."""
    driver = LectureDriver(win, lecture)
    if present:
        from gui.window.view_menu import toggle_present

        toggle_present(win)
        driver.show_page()
    if win.worker.checkpoint is not None:
        driver.go(0)
    return driver


__all__ = ["LectureDriver", "open_lecture"]
