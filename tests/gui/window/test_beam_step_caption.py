"""The Beam panel counts steps as the slider does (step k of n), and says how long the search ran."""

from __future__ import annotations

import re

from tests.gui.window.test_cancel_restores_settings import beam
from tests.gui.window.test_input_changes_translate import click
from tests.support.gui import TEXT, do, open_window

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
