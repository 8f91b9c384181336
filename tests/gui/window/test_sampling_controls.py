"""Sampling in the app: a Decoding choice with a temperature slider and a seed; the request carries
the strategy; the candidates dock shows the model's distribution and the one the step drew from."""

from __future__ import annotations

import pytest

from core.decoding.strategy import DecodingStrategy
from core.decoding.translate import translate
from gui.widgets.controls import DECODINGS
from tests.support.gui import type_and_translate


def test_the_inputs_build_each_strategy_and_show_it_back(window):
    inputs = window.inputs
    assert inputs.strategy() == DecodingStrategy.greedy() and window.current_request().strategy.is_greedy
    inputs.decoding.setCurrentIndex(DECODINGS.index("Sampling"))
    assert inputs.temperature.isVisibleTo(window) and not inputs.beam.isVisibleTo(window)
    inputs.temperature.setValue(16)
    inputs.seed.setValue(5)
    assert inputs.strategy() == DecodingStrategy.sampling(0.8, seed=5) and inputs.temperature_label.text() == "T = 0.80"
    assert window.current_request().strategy == DecodingStrategy.sampling(0.8, seed=5)
    for s in (DecodingStrategy.beam(3), DecodingStrategy.greedy(), DecodingStrategy.sampling(1.5, seed=9)):
        inputs.set_strategy(s)
        assert inputs.strategy() == s


def test_a_sampled_translation_in_the_window_equals_the_core_draw(qtbot, window):
    inputs = window.inputs
    inputs.set_strategy(DecodingStrategy.sampling(1.2, seed=4))
    r = type_and_translate(qtbot, window)
    core = translate(window.worker.checkpoint, inputs.text.text(), beam=DecodingStrategy.sampling(1.2, seed=4))
    assert [s.token_id for s in r.steps] == [s.token_id for s in core.steps] and r.mode == "sampling"
    window.controls.set_position(1)
    qtbot.waitUntil(lambda: window.vm.step == 1)
    step = r.steps[0]
    assert step.shaped is not None and len(step.shaped) == len(step.top_k)
    assert window.topk.shaped.tolist() == pytest.approx(step.shaped)
    assert window.topk.probs.tolist() == pytest.approx([p for _, p in step.top_k])
    assert "sampled from" in window.topk.title
