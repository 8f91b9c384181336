"""What is drawn is decided once per change: in the running window, with Present mode, the Heads
tab and the Alignment lines all open, one decoder step builds one frame (gui/state/view_spec.py),
cuts the maps to the step once and computes each view's data, masks and derived cells once; every
renderer draws that same frame."""

from __future__ import annotations

import collections

import numpy as np
import pytest

from bench.run import synthetic_translation
from bench.spec_count import count_calls
from gui.window import view_menu
from gui.window.main_window import MainWindow

N = 12  # decoder steps of the synthetic result
STEPS = 4  # moves per view


@pytest.fixture
def busy_window(qtbot):
    """The real window on a synthetic 3 × 4-head result, Present mode open, Heads tab and
    Alignment lines in front (every follower of the view model is live)."""
    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    win.show_result(synthetic_translation(3, 4, N), N - 1)
    win.show_live_tab("heads")
    win.show_alignment()
    view_menu.toggle_present(win)
    qtbot.waitUntil(lambda: win.present_window is not None and win.present_window.isVisible(), timeout=10000)
    yield win
    win.present_window.close()
    win.close()


@pytest.mark.parametrize("kind", ["encoder", "decoder", "cross", "masks"])
def test_one_step_computes_each_part_of_the_picture_once(busy_window, qapp, kind):
    win = busy_window
    win.set_view(kind)
    qapp.processEvents()
    counts: collections.Counter = collections.Counter()
    undo = count_calls(counts)
    try:
        position = N - 1
        for _ in range(STEPS):
            position = 2 * N - 1 - position  # alternately step N - 1 and N: each move changes the step
            win.go_to_step(position)
            qapp.processEvents()
    finally:
        undo()
    per_step = {name: c / STEPS for name, c in counts.items()}
    expected = {"build_frame": 1, "AttentionMaps.truncated": 1, "masks_of": 1}
    expected.update({"mask_cells": 1} if kind == "masks" else {"view_at": 1, "derived_maps": 1})
    assert per_step == expected


def test_every_renderer_draws_the_frame_the_view_model_built(busy_window, qapp):
    win = busy_window
    for kind, key in (("decoder", (2, 3)), ("cross", ("mean", 1)), ("encoder", ("rollout", 0))):
        win.set_view(kind)
        win.cell_clicked(key)
        win.go_to_step(7)
        qapp.processEvents()
        frame = win.vm.frame()
        spec = frame.enlarged
        assert spec.key == key and frame.grid.selected == key
        # the main window's enlarged map and Present mode hold the frame's very matrix
        assert np.array_equal(win.heatmap.matrix, spec.matrix, equal_nan=True)
        assert np.array_equal(win.present_window.heatmap.matrix, spec.matrix, equal_nan=True)
        assert win.present_window.heatmap.drawn_args[4] == spec.presenter_title and win.heatmap.drawn_args[4] == spec.title
        # the head tools follow the same frame: its view data object, not a recomputation
        heads = win.panel("heads")
        assert heads._seen is frame and heads._state[0] is frame.view
        assert np.array_equal(heads.alignment_map().matrix, spec.matrix)
