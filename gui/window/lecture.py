"""Lectures in the window: apply a lecture step (:mod:`gui.state.lecture`) to the main window with
the live model, step through the lecture with a presenter's clicker, and render the whole lecture
as a deck (numbered PNGs, one PDF, ``captions.md``).

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
import time
from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from core.errors import StudioError
from gui.state.lecture import (
    Lecture,
    LectureError,
    LectureStep,
    Page,
    ablation_note,
    append_step,
    check_lecture,
    inside_note,
    page_markdown,
    page_of,
    result_note,
)
from gui.state.view_data import view_at
from gui.state.view_spec import enlarged_spec
from gui.widgets.heatmap import Heatmap
from gui.widgets.map_style import MASK_CMAP

PRESENT_HELP = "→ ← / PgDn PgUp lecture step · ↓ ↑ decoder step · V view · L layer · H head · M mean · Esc leave"
NEXT_KEYS = (QtCore.Qt.Key.Key_Right, QtCore.Qt.Key.Key_PageDown)
PREVIOUS_KEYS = (QtCore.Qt.Key.Key_Left, QtCore.Qt.Key.Key_PageUp)
DECK_SIZE = (1920, 1080)
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
            self.bar_label.setText(f"{head} &nbsp; {settings}<br>{_caption_html(page)}")
        if self._decorated is not None:
            pw, header, text = self._decorated
            header.setText(f"{head} &nbsp; {settings}")
            text.setText(_caption_html(page, max(pw.font().pointSize() - 10, 11)))

    def _build_bar(self) -> None:
        self.bar = QtWidgets.QWidget()
        row = QtWidgets.QHBoxLayout(self.bar)
        row.setContentsMargins(4, 2, 4, 2)
        previous = QtWidgets.QPushButton("◀ Previous step (PgUp)")
        following = QtWidgets.QPushButton("Next step (PgDn) ▶")
        self.bar_label = QtWidgets.QLabel(f"<b>Lecture · {self.lecture.title}</b>: loading the model …")
        self.bar_label.setWordWrap(True)
        self.bar_label.setTextFormat(QtCore.Qt.TextFormat.RichText)
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


def note_html(note: str, across: bool = False) -> str:
    """A page's note as HTML: lines with tabs become the rows of a table (the first one its
    header; ``across``: transposed, one column per key, for the narrow strip under Present
    mode's map), the other lines paragraphs."""
    out, rows = [], []

    def flush() -> None:
        if not rows:
            return
        table = [list(col) for col in zip(*rows)] if across else list(rows)
        html_rows = []
        for i, r in enumerate(table):
            tag = "th" if (i == 0 and not across) else "td"
            cells = "".join(f"<{'th' if across and j == 0 else tag} align='{'left' if j == 0 else 'right'}'>"
                            f"{html.escape(c)}</{'th' if across and j == 0 else tag}>" for j, c in enumerate(r))
            html_rows.append(f"<tr>{cells}</tr>")
        out.append("<table cellspacing='0' cellpadding='5'>" + "".join(html_rows) + "</table>")
        rows.clear()

    for line in note.splitlines():
        if "\t" in line:
            rows.append(line.split("\t"))
            continue
        flush()
        out.append(f"<p>{html.escape(line)}</p>")
    flush()
    return "".join(out)


def _caption_html(page: Page, note_pt: int = 0) -> str:
    if page.error:
        return f"<span style='color:#b00020'>{html.escape(page.caption)}</span>".replace("\n", "<br>")
    text = html.escape(page.caption).replace("\n", "<br>")
    if page.note:
        size = f" font-size:{note_pt}pt;" if note_pt else ""
        text += f"<div style='color:#444;{size}'>{note_html(page.note, across=True)}</div>"
    return text


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


# ---------------------------------------------------------------------------------------------- the deck

class LectureSlide(QtWidgets.QWidget):
    """One deck page, 1920 × 1080: the heading, the sentence and step, the map (most of the page,
    what Present mode shows: :func:`gui.state.view_spec.enlarged_spec`), the experiment's numbers
    beside it, the caption, and a footer naming what is drawn."""

    def __init__(self, cmap, font_family: str = "", size: tuple[int, int] = DECK_SIZE) -> None:
        super().__init__()
        self.cmap = cmap
        self.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen)
        self.setAutoFillBackground(True)
        pal = self.palette()
        pal.setColor(QtGui.QPalette.ColorRole.Window, QtGui.QColor("white"))
        pal.setColor(QtGui.QPalette.ColorRole.WindowText, QtGui.QColor("#111111"))
        self.setPalette(pal)
        self.setFixedSize(*size)

        def font(pt: int, bold: bool = False) -> QtGui.QFont:
            f = QtGui.QFont(font_family) if font_family else QtGui.QFont()
            f.setPointSize(pt)
            f.setBold(bold)
            return f

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(36, 24, 36, 18)
        layout.setSpacing(6)
        self.heading = self._label(font(24, True))
        self.sentence = self._label(font(21))
        self.where = self._label(font(14))
        self.heatmap = Heatmap(cmap)
        self.heatmap.set_font(font(15))
        self.heatmap.set_show_values(True)
        self.note = self._label(font(15))
        self.note.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.note.setFixedWidth(size[0] * 3 // 10)
        self.note.setAlignment(QtCore.Qt.AlignmentFlag.AlignTop | QtCore.Qt.AlignmentFlag.AlignLeft)
        self.blank = self._label(font(18))
        self.blank.setAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
        self.blank.setText("(nothing drawn: see the caption)")
        self.blank.setStyleSheet("QLabel { color: #777777; }")
        self.note_below = self._label(font(14))
        self.note_below.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.note_below.setStyleSheet("QLabel { color: #333333; }")
        self.caption = self._label(font(18))
        self.caption.setStyleSheet("QLabel { background: #f3f3f0; padding: 10px; border-left: 6px solid #4a6fa5; }")
        self.footer = self._label(font(12))
        self.footer.setStyleSheet("QLabel { color: #555555; }")
        body = QtWidgets.QHBoxLayout()
        body.addWidget(self.heatmap, 1)
        body.addWidget(self.blank, 1)
        body.addWidget(self.note, 0)
        for w in (self.heading, self.sentence, self.where):
            layout.addWidget(w)
        layout.addLayout(body, 1)
        layout.addWidget(self.note_below)
        layout.addWidget(self.caption)
        layout.addWidget(self.footer)

    @staticmethod
    def _label(font: QtGui.QFont) -> QtWidgets.QLabel:
        label = QtWidgets.QLabel()
        label.setFont(font)
        label.setWordWrap(True)
        label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        return label

    def show_page(self, page: Page, vm, model: str = "", scale: str = "fixed") -> None:
        """Fill the page from ``page`` and the map of the view model ``vm`` (None: no map)."""
        self.heading.setText(page.heading)
        self.sentence.setText(page.sentence)
        self.where.setText(" · ".join(x for x in (page.where, page.settings) if x))
        self.caption.setText(page.caption)
        self.caption.setStyleSheet(self.caption.styleSheet().replace("#4a6fa5", "#b00020") if page.error else
                                   self.caption.styleSheet().replace("#b00020", "#4a6fa5"))
        table = "\t" in page.note  # a table (the inside of a step) stands beside the map, lines go under it
        self.note.setText(note_html(page.note) if table else "")
        self.note.setVisible(table)
        self.note_below.setText("" if table else note_html(page.note))
        self.note_below.setVisible(bool(page.note) and not table)
        self.footer.setText(f"Drawn: {page.drawn}" + (f" · model {model}" if model else "") +
                            f" · lecture step {page.number} / {page.total} · Attention Studio")
        spec = None if page.error or vm is None else enlarged_spec(vm, presenter=True)
        self.heatmap.set_scale(scale)
        self.heatmap.setVisible(spec is not None)
        self.blank.setVisible(spec is None)
        if spec is None:
            return
        if spec.mask_picture:
            self.heatmap.set_colormap(MASK_CMAP)
            self.heatmap.set_mask_matrix(spec.matrix, spec.row_tokens, spec.col_tokens, spec.title)
        else:
            self.heatmap.set_colormap(self.cmap)
            self.heatmap.set_matrix(np.asarray(spec.matrix), spec.mask, spec.row_tokens, spec.col_tokens, spec.title,
                                    spec.row_label, spec.col_label)

    def image(self) -> QtGui.QImage:
        """The page as an image of exactly the slide's size."""
        app = QtWidgets.QApplication.instance()
        for _ in range(3):
            app.processEvents()
        image = self.grab().toImage()
        if image.size() != self.size():
            image = image.scaled(self.size(), QtCore.Qt.AspectRatioMode.IgnoreAspectRatio,
                                 QtCore.Qt.TransformationMode.SmoothTransformation)
        return image


def wait_until(done, timeout_s: float, what: str) -> None:
    """Process events until ``done()`` (the deck's steps run in the window's worker). Raises
    ValueError after ``timeout_s`` seconds."""
    app = QtWidgets.QApplication.instance()
    end = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > end:
            raise ValueError(f"{what}: no answer within {timeout_s:.0f} s")
        app.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 50)
        time.sleep(0.002)


def render_deck(win, lecture: Lecture, out: Path | str, size: tuple[int, int] = DECK_SIZE,
                timeout_s: float = 180.0, model: str = "") -> list[Path]:
    """Run every step of ``lecture`` on ``win`` (its model loaded) and write ``step-01.png`` …
    (``size``), ``<lecture>.pdf`` (one page per step) and ``captions.md`` into ``out``; returns
    the files written. A step with problems becomes a page that shows them. Raises ValueError when
    a step gets no answer within ``timeout_s`` or a file cannot be written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    driver = LectureDriver(win, lecture, interactive=False)
    slide = LectureSlide(win.cmap, win.font_family, size)
    slide.show()
    stem = lecture.path.stem if lecture.path is not None else "lecture"
    pdf_path = out / f"{stem}.pdf"
    writer = QtGui.QPdfWriter(str(pdf_path))
    writer.setTitle(lecture.title)
    writer.setCreator("Attention Studio")
    writer.setResolution(96)
    writer.setPageSize(QtGui.QPageSize(QtCore.QSizeF(size[0] * 0.75, size[1] * 0.75), QtGui.QPageSize.Unit.Point,
                                       "slide"))
    writer.setPageMargins(QtCore.QMarginsF(0, 0, 0, 0))
    painter = QtGui.QPainter()
    written: list[Path] = []
    markdown = [f"# {lecture.title}", "", f"{len(lecture.steps)} steps" + (f" on the model {model}" if model else "") +
                f"; the PDF is [{pdf_path.name}]({pdf_path.name}).", ""]
    try:
        for i in range(len(lecture.steps)):
            driver.go(i)
            wait_until(lambda: driver.done, timeout_s, f"lecture step {i + 1}")
            page = driver.page
            slide.show_page(page, None if page.error else win.vm, model, win.heatmap.scale)
            image = slide.image()
            png = out / f"step-{i + 1:02d}.png"
            if not image.save(str(png)):
                raise ValueError(f"could not write {png}")
            written.append(png)
            if i == 0:
                if not painter.begin(writer):
                    raise ValueError(f"could not write {pdf_path}")
            elif not writer.newPage():
                raise ValueError(f"could not add page {i + 1} to {pdf_path}")
            target = painter.viewport()
            painter.drawImage(QtCore.QRect(0, 0, target.width(), target.height()), image)
            markdown.append(page_markdown(page, png.name))
    finally:
        if painter.isActive():
            painter.end()
        slide.close()
        driver.detach()
        driver.deleteLater()
    written.append(pdf_path)
    md = out / "captions.md"
    try:
        md.write_text("\n".join(markdown), encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"could not write {md}: {exc}") from None
    written.append(md)
    return written


def run_from_command_line(app, win, lecture: Lecture, args) -> int:
    """``main.py --lecture FILE``: ``win`` on the lecture in Present mode (runs the event loop),
    or with ``--deck OUT`` every step rendered offscreen into OUT; returns the exit status (2 with
    one ``error:`` line when the model or a step fails)."""
    import sys

    from core.checkpoints.checkpoint import load_checkpoint

    if args.deck is None:
        win.show()
        driver = open_lecture(win, lecture)  # noqa: F841 - lives as long as the event loop
        win.load_checkpoint(args.checkpoint, args.device, args.precision)
        return app.exec()
    t0 = time.perf_counter()
    try:
        ckpt = load_checkpoint(args.checkpoint, device=args.device, precision=args.precision)
        win.use_checkpoint(ckpt)
        win.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen)  # shown (its tabs work), never on screen
        win.show()
        files = render_deck(win, lecture, args.deck, model=ckpt.name)
    except (StudioError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        win.close()
    pngs = [f for f in files if f.suffix == ".png"]
    others = ", ".join(f.name for f in files if f.suffix != ".png")
    print(f"saved {len(pngs)} pages to {args.deck}: {pngs[0].name} … {pngs[-1].name}, {others} "
          f"({time.perf_counter() - t0:.1f} s)")
    return 0


__all__ = ["LectureDriver", "LectureSlide", "fill_inputs", "open_lecture", "render_deck", "save_state_dialog",
           "run_from_command_line", "select_view", "step_from_window", "wait_until"]
