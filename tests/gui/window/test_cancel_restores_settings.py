"""Five state slips a lecturer tripped over live, each driven like a user on the tiny checkpoint:

1. Enter in the "Batch with" box translates, as Enter in the Korean box does;
2. clearing the Reference box goes back to free decoding of the sentence (once a first result exists);
3. step keys and the slider wait while a new search runs: no step is shown that is not computed;
4. after Cancel, the inputs that describe the result on screen are put back to that result (k,
   decoding, pad-to, causal mask, show full); an edited text box is kept and the screen says so;
5. the Beam panel counts steps as the slider does (step k of n), and says how long the search ran.

A long search is stood in for by :class:`SlowSearch`: requests of the beam sizes it holds poll
``should_stop`` (so Cancel stops them, as a real search) until ``release`` is set, then run the real start.
"""

from __future__ import annotations

import re
import threading

import pytest
from PySide6 import QtCore

import gui.workers.model_worker
from tests.support.gui import TEXT, WORK_TIMEOUT_MS, do, open_window

LONG = "집에 누군가 있어? 제발 앉아. 외로워. 나는 학생입니다."
Key = QtCore.Qt.Key


class SlowSearch:
    """The worker's start of a request; a request with a beam size in ``beams`` is held until ``release``."""

    def __init__(self, real, beams: set[int]) -> None:
        self.real, self.beams = real, beams
        self.started, self.release = threading.Event(), threading.Event()

    def __call__(self, ckpt, req, should_stop=None):
        if req.beam in self.beams:
            self.started.set()
            while not self.release.wait(0.005):
                if should_stop is not None:
                    should_stop()  # raises Cancelled once Cancel (or a newer request) dropped it
        return self.real(ckpt, req, should_stop)


@pytest.fixture
def slow_search(monkeypatch):
    made: list[SlowSearch] = []

    def make(*beams: int) -> SlowSearch:
        slow = SlowSearch(gui.workers.model_worker.start, set(beams))
        monkeypatch.setattr(gui.workers.model_worker, "start", slow)
        made.append(slow)
        return slow

    yield make
    for slow in made:
        slow.release.set()


def beam(win, k: int) -> None:
    """Beam k: the k box first, then Decoding (once a result is shown, only the last re-translates at k)."""
    win.inputs.beam.setValue(k)
    win.inputs.decoding.setCurrentIndex(1)


def plain(html_text: str) -> str:
    return re.sub("<[^>]+>", "", html_text).replace("&nbsp;", " ")


def click(qtbot, button) -> None:
    qtbot.mouseClick(button, QtCore.Qt.MouseButton.LeftButton)


# ---------------------------------------------------------------------------------------------- 1


def test_enter_in_the_batch_with_box_translates(qtbot, window):
    window.inputs.text.setText(LONG)
    window.live.bar.batch_with.setText("외로워.")
    do(qtbot, window, lambda: qtbot.keyClick(window.live.bar.batch_with, Key.Key_Return))
    st = window.vm.state
    assert len(st.batch) == 2 and window.live.bar.shown.isEnabled()


# ---------------------------------------------------------------------------------------------- 2


def test_clearing_the_reference_goes_back_to_free_decoding(qtbot, window):
    window.inputs.text.setText(TEXT)
    window.inputs.reference.setText("is someone at home?")
    do(qtbot, window, lambda: qtbot.keyClick(window.inputs.reference, Key.Key_Return))
    assert window.vm.teacher_forced
    ref = window.inputs.reference
    ref.setFocus()
    qtbot.keyClick(ref, Key.Key_A, QtCore.Qt.KeyboardModifier.ControlModifier)
    do(qtbot, window, lambda: qtbot.keyClick(ref, Key.Key_Backspace))  # the box is empty now
    assert ref.text() == ""
    assert not window.vm.teacher_forced and window.vm.live and window.result.mode == "greedy"
    assert window.vm.step == 0 and window.result.source.text == TEXT  # the sentence, decoded freely, as after Enter
    # a reference typed and cleared again without Enter never was on screen: nothing restarts
    do(qtbot, window, lambda: click(qtbot, window.controls.step_button))
    job = window.request_id
    ref.setText("abc")
    ref.clear()
    qtbot.wait(100)
    assert window.request_id == job and window.vm.step == 1


# ---------------------------------------------------------------------------------------------- 3


def test_step_keys_during_a_search_wait_for_its_result(qtbot, window, slow_search):
    slow = slow_search(16)
    window.inputs.text.setText(TEXT)
    beam(window, 4)
    do(qtbot, window, window.translate)  # live beam 4 at step 0; from now on settings re-translate
    c, before = window.controls, window.vm.state
    assert c.label.text() == "step 0 / …"
    window.inputs.beam.setValue(16)  # the beam-16 search runs (held by slow_search)
    assert slow.started.wait(WORK_TIMEOUT_MS / 1000)
    for key in (Key.Key_End, Key.Key_Right, Key.Key_Right, Key.Key_Home, Key.Key_Space, Key.Key_Left):
        qtbot.keyClick(window, key)
        qtbot.wait(20)
        assert (c.position, window.vm.step, c.label.text()) == (0, 0, "step 0 / …"), key
        assert "After step 0:" in plain(window.translation_label.text()) and not c.timer.isActive()
    c.slider.setValue(5)  # a drag
    qtbot.wait(20)
    assert (c.position, c.label.text()) == (0, "step 0 / …")
    assert "wait" in window.status.currentMessage()  # says why the keys do nothing
    slow.release.set()
    qtbot.waitUntil(lambda: window.vm.state is not before, timeout=WORK_TIMEOUT_MS)
    qtbot.wait(200)  # nothing else was queued behind the search
    assert window.result.beam == 16 and window.vm.step == 0 and (c.position, c.label.text()) == (0, "step 0 / …")
    do(qtbot, window, lambda: qtbot.keyClick(window, Key.Key_Right))  # now the keys step the new result
    assert window.vm.step == 1 and c.label.text() == "step 1 / …"
    # never a step beyond what is computed, also while a command runs: End on an unfinished output
    # does not claim the output budget as its length before the answer
    version = window.vm.version
    qtbot.keyClick(window, Key.Key_End)
    assert window.vm.version == version and not c.label.text().startswith(f"step {c.slider.maximum()}")
    assert c.label.text().startswith("step 1")
    qtbot.waitUntil(lambda: window.vm.version > version, timeout=WORK_TIMEOUT_MS)
    n = window.vm.n_steps
    assert window.vm.state.finished and c.label.text() == f"step {n} / {n}" and c.position == n


# ---------------------------------------------------------------------------------------------- 4


def wait_cancelled(qtbot, window) -> None:
    qtbot.waitUntil(lambda: "cancelled" in window.status.currentMessage(), timeout=WORK_TIMEOUT_MS)


def test_cancel_puts_the_settings_back_to_the_result_on_screen(qtbot, window, slow_search):
    slow = slow_search(15)
    window.inputs.text.setText(TEXT)
    beam(window, 16)
    do(qtbot, window, window.translate)
    assert window.result.beam == 16
    window.inputs.beam.setValue(15)  # re-translates at k = 15 (held)
    assert slow.started.wait(WORK_TIMEOUT_MS / 1000)
    job = window.request_id
    window.cancel()
    wait_cancelled(qtbot, window)
    assert window.inputs.beam.value() == window.result.beam == 16  # the k box describes the result shown
    assert window.current_request().beam == 16 and window.inputs.beam.isEnabled()
    qtbot.wait(100)
    assert window.request_id == job  # putting k back did not start another search
    assert "k = 16" in window.status.currentMessage()  # and the status bar says what was put back
    do(qtbot, window, lambda: qtbot.keyClick(window, Key.Key_Right))  # the result shown steps on
    assert window.vm.step == 1 and window.result.beam == 16


def test_cancel_of_greedy_to_beam_puts_decoding_back(qtbot, window, slow_search):
    slow_search(4)
    window.inputs.text.setText(TEXT)
    do(qtbot, window, window.translate)  # greedy
    beam(window, 4)  # switching to Beam re-translates (held)
    window.cancel()
    wait_cancelled(qtbot, window)
    assert window.inputs.decoding.currentIndex() == 0 and not window.inputs.beam.isEnabled()
    assert window.current_request().beam == 1 == window.result.beam


def test_cancel_keeps_an_edited_sentence_and_says_it_is_not_the_one_shown(qtbot, window, slow_search):
    slow = slow_search(16)
    window.inputs.text.setText(TEXT)
    do(qtbot, window, window.translate)  # greedy, shown
    beam(window, 16)  # held: the k box is part of what is cancelled below
    window.inputs.text.setText("외로워.")
    do_enter = lambda: qtbot.keyClick(window.inputs.text, Key.Key_Return)  # noqa: E731
    do_enter()
    assert slow.started.wait(WORK_TIMEOUT_MS / 1000)
    window.cancel()
    wait_cancelled(qtbot, window)
    assert window.inputs.text.text() == "외로워."  # typed work is never thrown away
    assert window.result.source.text == TEXT and window.inputs.decoding.currentIndex() == 0
    message = window.status.currentMessage()
    assert "Korean" in message and "not the result shown" in message


# ---------------------------------------------------------------------------------------------- 5

CAPTION_STEP = re.compile(r"step (\d+) of (\S+?)[:,. ]")
LABEL_STEP = re.compile(r"step (\d+) / (\S+)")


def counts(window) -> tuple[tuple[str, str], tuple[str, str]]:
    cap = CAPTION_STEP.search(window.live.beam.caption.text())
    lab = LABEL_STEP.search(window.controls.label.text())
    assert cap and lab, (window.live.beam.caption.text(), window.controls.label.text())
    return cap.groups(), lab.groups()


def test_beam_caption_counts_steps_as_the_slider_at_step_0_and_while_stepping(qtbot, window):
    window.inputs.text.setText(TEXT)
    beam(window, 4)
    do(qtbot, window, window.translate)
    assert window.vm.step == 0
    caption, label = counts(window)
    assert caption == label == ("0", "…")  # was "search step 1 of 24" beside "step 0 / …"
    assert window.live.beam.table.rowCount() == 0  # the beam after step 0 is [BOS] alone: no hypothesis yet
    do(qtbot, window, lambda: click(qtbot, window.controls.step_button))
    caption, label = counts(window)
    assert caption == label == ("1", "…") and window.live.beam.table.rowCount() > 0
    do(qtbot, window, lambda: click(qtbot, window.controls.end_button))
    caption, label = counts(window)
    n = str(window.vm.n_steps)
    assert caption == label == (n, n)


def test_beam_caption_total_is_the_slider_total_when_the_search_ran_on(qtbot, second_checkpoint):
    """The search goes on after the shown hypothesis ends (its stopping rule): the slider's n and
    the caption's total must still agree, and the search's own length is named as such."""
    win = open_window(qtbot, second_checkpoint)
    try:
        win.inputs.text.setText("이거 무슨 냄새지?")
        beam(win, 2)
        do(qtbot, win, win.translate)
        do(qtbot, win, lambda: click(qtbot, win.controls.end_button))
        n, searched = win.vm.n_steps, len(win.result.beam_trace)
        assert win.vm.state.finished and searched > n, "the search should run past the hypothesis shown"
        caption, label = counts(win)
        assert caption == label == (str(n), str(n))  # was "search step 3 of 9" beside "step 3 / 3"
        assert f"search itself ran {searched} steps" in win.live.beam.caption.text()
    finally:
        win.close()
