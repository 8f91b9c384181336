"""After Cancel, the inputs that describe the result on screen are put back to that result (k,
decoding, pad-to, causal mask, show full); an edited text box is kept and the screen says so."""

from __future__ import annotations

from PySide6 import QtCore

from tests.support.gui import TEXT, WORK_TIMEOUT_MS, do

Key = QtCore.Qt.Key


def beam(win, k: int) -> None:
    """Beam k: the k box first, then Decoding (once a result is shown, only the last re-translates at k)."""
    win.inputs.beam.setValue(k)
    win.inputs.decoding.setCurrentIndex(1)


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
