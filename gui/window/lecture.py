"""Lectures in the window: apply a lecture step (:mod:`gui.state.lecture`) to the main window with
the live model and step through the lecture with a presenter's clicker (the deck, every step
rendered to files: :mod:`gui.window.lecture_deck`).

Applying a step goes through the window's own controls and worker, as a person would: the inputs
are filled, Translate runs, the live decoder seeks to the step (``force`` forks it first), the
view and head are selected, and ``ablate`` / ``query`` run in the Ablate heads / Inside one step
tabs. :class:`LectureDriver` does this as a chain of actions, each waiting for the window's answer
(never blocking the GUI thread); ``shown(index)`` says when the step is on screen.

Keys (``main.py --lecture FILE`` opens Present mode): → / Page Down next lecture step, ← / Page Up
previous (what presenter clickers send), ↓ / ↑ one decoder step forward / back; in the main window
Page Down / Page Up (the arrows keep stepping the decoder there).
"""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from core.errors import StudioError
from gui.state.lecture import Lecture, LectureError, LectureStep, check_lecture
from gui.state.lecture_pages import Page, ablation_note, inside_note, page_of, result_note
from gui.state.lecture_toml import append_step
from gui.state.view_data import view_at
from gui.widgets.fonts import WrappedLabel
from gui.window.lecture_text import caption_html, note_point_size

NOTE_MAX_HEIGHT = 0.25  # Present mode's note takes at most this part of the window's height (the map keeps the rest)
PRESENT_HELP = "→ ← / PgDn PgUp lecture step · ↓ ↑ decoder step · V view · L layer · H head · M mean · Esc leave"
NEXT_KEYS = (QtCore.Qt.Key.Key_Right, QtCore.Qt.Key.Key_PageDown)
PREVIOUS_KEYS = (QtCore.Qt.Key.Key_Left, QtCore.Qt.Key.Key_PageUp)
CORE_KIND = {"encoder": "enc", "decoder": "dec", "cross": "cross"}


# ---------------------------------------------------------------------------------------------- the window's inputs

def fill_inputs(win, step: LectureStep) -> None:
    """Put ``step``'s sentence and switches into the window's inputs (nothing runs: the inputs'
    own re-translation on a settings change is held off while they are filled)."""
    inputs = win.inputs
    auto, inputs.auto_translate = inputs.auto_translate, False
    try:
        inputs.text.setText(step.sentence)
        inputs.reference.setText(step.reference or "")
        inputs.pad_to.setValue(step.pad_to or 0)
        win.live.bar.batch_with.setText(step.batch_with or "")
        win.live.reference.causal_off.setChecked(not step.causal_mask)
        if step.beam > 1:
            inputs.beam.setValue(step.beam)
        inputs.decoding.setCurrentIndex(0 if step.beam == 1 else 1)
    finally:
        inputs.auto_translate = auto


def select_view(win, step: LectureStep) -> None:
    """Show ``step``'s view and enlarge its head (or its mask in the Masks view)."""
    win.set_view(step.view)
    if step.view == "masks":
        win.select(step.mask - 1, 0)
    else:
        win.select(step.layer - 1, step.head - 1)


def step_from_window(win) -> LectureStep:
    """The window's state as a lecture step: sentence, switches, view, head, the decoder step
    (none at the end), a forced token, the ablation or query of the tab shown. Raises ValueError
    before a translation is shown."""
    vm = win.vm
    if vm.result is None:
        raise ValueError("nothing to save yet: translate a sentence first")
    step = LectureStep(0, sentence=win.inputs.text.text().strip())
    step.reference = win.inputs.reference.text().strip() or None
    step.causal_mask = win.live.causal or step.reference is None
    step.batch_with = win.live.bar.batch_with.text().strip() or None
    step.pad_to = win.inputs.pad_to.value() or None
    step.beam = win.inputs.beam_size()
    step.decoding = "greedy" if step.beam == 1 else "beam"
    step.view = vm.kind
    if vm.kind == "masks":
        step.mask = vm.selected[0] + 1
    else:
        step.layer, step.head = vm.selected[0] + 1, vm.selected[1] + 1
    at_end = vm.state.finished and vm.step >= len(vm.result.steps)
    step.decoder_step = None if at_end else vm.step
    st = vm.state
    if st.fork_point is not None and st.fork_point <= len(vm.result.steps):
        step.force = vm.result.steps[st.fork_point - 1].token.replace("▁", " ").strip() or None
        step.force_at = st.fork_point if step.force else None
    current = win.live.tabs.currentWidget()
    ablation = win.analysis.ablation if win.slots.is_built("analysis") else None  # never shown: nothing ablated
    if ablation is not None and current is ablation and ablation.report is not None:
        r = ablation.report.result
        step.ablate = ",".join(f"{la}:{h}" for la, h in r.heads)
        step.ablate_kind = r.kind
    if win.slots.is_built("inside") and current is win.inside_panel and win.inside_panel.step is not None:
        step.query = win.inside_panel.query.value()
    return step


def save_state_dialog(win) -> Path | None:
    """File → Save state as lecture step…: append the window's state to a lecture file (a new
    file starts with a title); the status bar says which step it became. Returns the path."""
    from gui.export.files import start_dir

    try:
        step = step_from_window(win)
    except ValueError as exc:
        win.status.showMessage(str(exc), 5000)
        return None
    path, _ = QtWidgets.QFileDialog.getSaveFileName(
        win, "Save state as lecture step (appended to the file)", str(start_dir() / "lecture.toml"),
        "Lecture (*.toml)", options=QtWidgets.QFileDialog.Option.DontConfirmOverwrite)
    if not path:
        return None
    try:
        number = append_step(path, step)
    except LectureError as exc:
        QtWidgets.QMessageBox.warning(win, "Could not save the lecture step", str(exc))
        return None
    win.status.showMessage(f"saved as step {number} of {path}: write its caption there", 8000)
    return Path(path)


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
        self._decorated = None  # (present window, header label, caption label)
        self._fitted_size = QtCore.QSize()  # Present mode's size the note's point size was fitted to
        self._poll = QtCore.QTimer(self)  # a safety net beside the events below
        self._poll.setInterval(50)
        self._poll.timeout.connect(self._resume)
        win.vm.subscribe(self._poke)
        win.worker.failed.connect(self._on_failed)
        win.worker.cancelled.connect(self._on_cancelled)
        win.worker.computed.connect(self._on_computed)
        win.worker.compute_failed.connect(self._on_computed)
        win.analysis.answered.connect(self._on_answered)
        self.bar = None
        if interactive:
            win.worker.loaded.connect(self._on_loaded)
            QtWidgets.QApplication.instance().installEventFilter(self)
            self._build_bar()

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
        self._failure, self._wait, self._job = None, None, None
        step = self.lecture.steps[index]
        ckpt = self.win.worker.checkpoint
        if ckpt is not None:
            check_lecture(self.lecture, ckpt.config)
        if not step.ok:
            self._chain = None
            self._finish()
            return
        self._chain = self._apply(step)
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
            notes.append(f"(the output ends after {win.vm.step} steps: shown at step {win.vm.step}, "
                         f"not {step.decoder_step})")
        if step.ablate is not None:
            notes.append((yield from self._ablate(step)))
        if step.query is not None:
            notes.append((yield from self._inside(step)))
        self.note = "\n".join(n for n in notes if n)

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
            raise ValueError(f"lecture step {step.number}, query: {step.query} is out of range 1..{ip.query.maximum()} "
                             "for this map (one query per row)")
        ip.query.setValue(step.query)
        ip.refresh()
        row = np.asarray(view_at(win.vm.result, win.vm.step, win.vm.kind).weights[step.layer - 1, step.head - 1,
                                                                                 step.query - 1])
        want = (CORE_KIND[step.view], step.layer, step.head, step.query)

        def ready() -> bool:
            st = ip.step
            if ip.message.text().startswith("⚠"):
                return True
            return st is not None and (st.kind, st.layer, st.head, st.query) == want and \
                ip.heatmap_row is not None and np.array_equal(ip.heatmap_row, row)

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
        self.page = page_of(self.lecture, step, None if error else self.win.vm, self.note, error)
        self.done = True
        self.show_page()
        self.shown.emit(self.index)

    # ---------- what the audience sees ----------
    def _show_progress(self, step: LectureStep) -> None:
        self.page = page_of(self.lecture, step, None, "", "")
        self.page.caption = step.caption
        self.page.drawn = "running the model …"
        self.show_page()

    def show_page(self) -> None:
        """Put the current page's heading and caption on the lecture bar and in Present mode."""
        if not self.interactive or self.page is None:
            return
        self._decorate()
        page = self.page
        head = f"<b>Lecture · {html.escape(page.heading)}</b>"
        settings = f"<span style='color:#555'>{html.escape(page.settings)}</span>"
        if self.bar is not None:
            self.bar_label.setText(f"{head} &nbsp; {settings}<br>{caption_html(page)}")
        if self._decorated is not None:
            pw, header, text = self._decorated
            header.setText(f"{head} &nbsp; {settings}")
            largest = text.font().pointSize()  # the numbers as large as the caption where they fit across
            margins = pw.layout().contentsMargins()
            width = pw.width() - margins.left() - margins.right() - 8
            pt = note_point_size(page.note, text.font(), width, pw.height() * NOTE_MAX_HEIGHT, largest)
            text.setText(caption_html(page, pt))
            self._fitted_size = pw.size()

    def _build_bar(self) -> None:
        self.bar = QtWidgets.QWidget()
        row = QtWidgets.QHBoxLayout(self.bar)
        row.setContentsMargins(4, 2, 4, 2)
        previous = QtWidgets.QPushButton("◀ Previous step (PgUp)")
        following = QtWidgets.QPushButton("Next step (PgDn) ▶")
        # whole lines (heading and caption, at most three; all of it on hover): a plain wrapped label
        # in this row kept one line's height and cut the caption through its second line
        self.bar_label = WrappedLabel(max_lines=3, max_share=0.15)
        self.bar_label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.bar_label.setText(f"<b>Lecture · {self.lecture.title}</b>: loading the model …")
        previous.clicked.connect(self.previous)
        following.clicked.connect(self.next)
        row.addWidget(previous)
        row.addWidget(self.bar_label, 1)
        row.addWidget(following)
        self.win.outer_layout.insertWidget(0, self.bar)

    def _decorate(self) -> None:
        """Give Present mode's window (a new one each time it opens) the lecture's heading and caption."""
        pw = getattr(self.win, "present_window", None)
        if pw is None or (self._decorated is not None and self._decorated[0] is pw):
            return
        header, text = QtWidgets.QLabel(), QtWidgets.QLabel()
        for label in (header, text):
            label.setWordWrap(True)
            label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        small = QtGui.QFont(pw.font())
        small.setPointSize(max(pw.font().pointSize() - 6, 14))
        header.setFont(small)
        text.setFont(small)
        layout = pw.layout()
        layout.insertWidget(0, header)
        layout.insertWidget(layout.indexOf(pw.heatmap) + 1, text)
        pw.help.setText(PRESENT_HELP)
        header.setText(f"<b>Lecture · {html.escape(self.lecture.title)}</b>: loading the model …")
        self._decorated = (pw, header, text)

    def eventFilter(self, obj, ev) -> bool:  # noqa: N802 (Qt naming)
        """Clicker keys: in Present mode → ← PgDn PgUp step the lecture and ↓ ↑ the decoder; in
        the main window PgDn PgUp step the lecture."""
        kind = ev.type()
        if kind == QtCore.QEvent.Type.Show and obj is getattr(self.win, "present_window", None):
            self._decorate()
            self.show_page()
        if (kind == QtCore.QEvent.Type.Resize and obj is getattr(self.win, "present_window", None)
                and obj.size() != self._fitted_size):
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


__all__ = ["LectureDriver", "fill_inputs", "open_lecture", "save_state_dialog", "select_view", "step_from_window"]
