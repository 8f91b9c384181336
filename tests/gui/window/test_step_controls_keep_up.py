"""The step controls never run ahead of the map, and clicks made while a step is computed are
kept: Play advances only once the previous step is drawn, quick Back clicks all count, while a
new translation is computed the controls are visibly disabled, and step keys and the slider wait
while a new search runs (no step is shown that is not computed). Slow model stubs (each live command
takes 150 ms; a held beam search) make the waiting observable."""

from __future__ import annotations

import re
import time

import pytest
from PySide6 import QtCore

import gui.workers.model_worker
from tests.gui.window.test_cancel_restores_settings import beam
from tests.support.gui import TEXT, WORK_TIMEOUT_MS, do

Key = QtCore.Qt.Key


def plain(html_text: str) -> str:
    return re.sub("<[^>]+>", "", html_text).replace("&nbsp;", " ")


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


SLOW_S = 0.15


@pytest.fixture
def slow_commands(monkeypatch):
    real = gui.workers.model_worker.run_command

    def slow(live, name, arg, should_stop=None):
        time.sleep(SLOW_S)
        return real(live, name, arg, should_stop)

    monkeypatch.setattr(gui.workers.model_worker, "run_command", slow)


def translated_to_end(qtbot, window) -> int:
    window.inputs.text.setText(TEXT)
    do(qtbot, window, window.translate)
    do(qtbot, window, lambda: window.controls.set_position(window.controls.slider.maximum()))
    qtbot.waitUntil(lambda: window.vm.state.finished, timeout=WORK_TIMEOUT_MS)
    return window.vm.n_steps


def test_play_advances_only_when_the_previous_step_is_drawn(qtbot, window, slow_commands):
    n = translated_to_end(qtbot, window)
    assert n >= 4
    c = window.controls
    do(qtbot, window, lambda: c.set_position(0))
    c.speed.setValue(20.0)  # a tick every 50 ms, each step takes 150 ms to compute
    c.toggle_play()
    ahead = []
    deadline = time.monotonic() + 30
    while c.timer.isActive() and time.monotonic() < deadline:
        qtbot.wait(10)
        ahead.append(c.position - window.vm.step)
    assert window.vm.step == n and c.position == n  # it got to the end, drawn
    assert max(ahead) <= 1  # the slider is at most the one step being computed ahead of the map


def test_quick_back_clicks_all_count(qtbot, window, slow_commands):
    n = translated_to_end(qtbot, window)
    c = window.controls
    for _ in range(4):
        qtbot.mouseClick(c.back_button, QtCore.Qt.MouseButton.LeftButton)
        qtbot.wait(15)
    assert "queued" in c.label.text()  # the label says where it goes
    qtbot.waitUntil(lambda: window.vm.step == n - 4 and not c.awaiting, timeout=WORK_TIMEOUT_MS)
    qtbot.wait(2 * int(SLOW_S * 1000))
    assert window.vm.step == n - 4 and c.position == n - 4


def test_the_step_buttons_are_disabled_while_a_new_translation_is_computed(qtbot, window, monkeypatch):
    real = gui.workers.model_worker.start
    release = []

    def held(ckpt, req, should_stop=None):
        while not release:
            time.sleep(0.005)
        return real(ckpt, req, should_stop)

    monkeypatch.setattr(gui.workers.model_worker, "start", held)
    c = window.controls
    window.inputs.text.setText(TEXT)
    window.translate()
    qtbot.wait(50)
    assert not any(w.isEnabled() for w in (c.step_button, c.back_button, c.end_button, c.play_button, c.slider))
    release.append(True)
    qtbot.waitUntil(lambda: window.vm.result is not None and not c.held, timeout=WORK_TIMEOUT_MS)
    assert all(w.isEnabled() for w in (c.step_button, c.back_button, c.end_button, c.play_button, c.slider))
