"""Changing an input translates again, as the user expects: Enter in the "Batch with" box as in the
Korean box, clearing the Reference box goes back to free decoding (once a first result exists), and
a new pad-to length or beam size re-translates."""

from __future__ import annotations

from PySide6 import QtCore

from tests.support.gui import TEXT, do, type_and_translate


def test_changing_pad_or_beam_translates_again(qtbot, window):
    type_and_translate(qtbot, window)
    do(qtbot, window, lambda: window.inputs.pad_to.setValue(20))
    assert len(window.result.source.ids) == 20
    do(qtbot, window, lambda: window.inputs.decoding.setCurrentIndex(1))
    assert window.result.beam == window.inputs.beam.value()


LONG = "집에 누군가 있어? 제발 앉아. 외로워. 나는 학생입니다."


Key = QtCore.Qt.Key


def click(qtbot, button) -> None:
    qtbot.mouseClick(button, QtCore.Qt.MouseButton.LeftButton)


def test_enter_in_the_batch_with_box_translates(qtbot, window):
    window.inputs.text.setText(LONG)
    window.live.bar.batch_with.setText("외로워.")
    do(qtbot, window, lambda: qtbot.keyClick(window.live.bar.batch_with, Key.Key_Return))
    st = window.vm.state
    assert len(st.batch) == 2 and window.live.bar.shown.isEnabled()


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
