"""Runs that overlap in the Ablate heads / Compare tabs (gui/panels/analysis.py, gui/workers/analysis_worker.py):

- a new ablation (comparison) cancels the tab's older one still running: it stops at its next
  decoder step (recorded ``cancelled`` id) instead of running to the end;
- the main input translates and steps while an ablation runs (its own thread and model copy):
  Translate stays enabled, the translation is the unablated one;
- Cancel while checkpoint B loads: the tab is idle at once, keeps its last result, and the late
  answer (``cancelled`` after the load, nothing decoded) changes nothing.

As in test_analysis_cancel.py the runs are the real core code, only held until the test has
acted; the waits are shorter than ``HOLD_S``, so a run that is never cancelled fails the test.
"""

from __future__ import annotations

import threading

import pytest
from PySide6 import QtCore

import gui.workers.analysis_worker
from core.analysis.ablation import translate_ablated
from core.decoding.translate import translate
from gui.workers.model_worker import Cancelled
from tests.gui.workers.test_analysis_cancel import ablated_now, press_cancel, record, same_npz, wait_until_cancelled
from tests.support.gui import ablate, compare, compare_checkpoints, do

TEXT = "집에 누군가 있어?"
OTHER = "제발 앉아."
FAST_MS = 10000  # < HOLD_S: without the fix the old run is still held when this runs out
ALL_ENC = "1:1,1:2,1:3,1:4,2:1,2:2,2:3,2:4"  # every encoder head of the tiny model


def click(qtbot, button) -> None:
    qtbot.mouseClick(button, QtCore.Qt.MouseButton.LeftButton)


def hold_first_ablation(monkeypatch):
    """The first ablation run afterwards waits (inside core, heads ablated) until it is cancelled;
    later runs are not held. Returns (held event, the models the runs used)."""
    held, models = threading.Event(), []
    real = gui.workers.analysis_worker.ablation_report

    def held_report(ckpt, text, heads, kind, should_stop=None, **options):
        models.append(ckpt.model)

        def stop():
            if ablated_now(ckpt.model) and not held.is_set():
                held.set()
                wait_until_cancelled(should_stop)
            should_stop()

        return real(ckpt, text, heads, kind, should_stop=stop, **options)

    monkeypatch.setattr(gui.workers.analysis_worker, "ablation_report", held_report)
    return held, models


def test_a_new_ablation_cancels_the_running_one(qtbot, window, monkeypatch):
    window.inputs.text.setText(TEXT)
    p, tabs = window.analysis.ablation, window.analysis
    held, _ = hold_first_ablation(monkeypatch)
    got = record(window)
    p.heads.setText("1:2")
    click(qtbot, p.ablate_button)
    first = tabs.ids["ablate"]
    qtbot.waitUntil(held.is_set, timeout=FAST_MS)  # the first run is inside core
    ablate(qtbot, window, "2:1", "enc")  # the second: answered once on screen
    second = tabs.ids["ablate"]
    # the recorder runs on the worker's thread, after the GUI's queued answer was posted: wait for both
    qtbot.waitUntil(lambda: (first, "ablate") in got["cancelled"] and bool(got["ablated"]), timeout=FAST_MS)
    assert second == first + 1 and got["ablated"] == [second]  # the first never finished
    assert p.report.result.heads == [(2, 1)] and "ablated" in p.status.text()
    qtbot.waitUntil(lambda: not window.inputs.cancel_button.isEnabled(), timeout=FAST_MS)


def test_a_new_comparison_cancels_the_running_one(qtbot, window, monkeypatch):
    window.inputs.text.setText(TEXT)
    c, tabs = window.analysis.compare, window.analysis
    c.set_mode("inputs")
    c.text_b.setText(OTHER)
    held, calls = threading.Event(), []
    real = gui.workers.analysis_worker.translate

    def held_translate(ckpt, text, should_stop=None, **options):
        calls.append(text)
        if not held.is_set():  # the first run A waits until it is cancelled
            held.set()
            wait_until_cancelled(should_stop)
        return real(ckpt, text, should_stop=should_stop, **options)

    monkeypatch.setattr(gui.workers.analysis_worker, "translate", held_translate)
    got = record(window)
    click(qtbot, c.compare_button)
    first = tabs.ids["compare"]
    qtbot.waitUntil(held.is_set, timeout=FAST_MS)
    c.text_b.setText("앉아.")
    compare(qtbot, window)
    second = tabs.ids["compare"]
    qtbot.waitUntil(lambda: (first, "compare") in got["cancelled"] and bool(got["compared"]), timeout=FAST_MS)
    assert got["compared"] == [second] and calls == [TEXT, TEXT, "앉아."]  # the first never ran B
    assert c.outcome.b.source.text == "앉아." and "compared" in c.status.text()


def test_translate_and_step_while_an_ablation_runs(qtbot, window, monkeypatch):
    window.inputs.text.setText(TEXT)
    tabs, inputs = window.analysis, window.inputs
    ck = window.worker.checkpoint
    held, models = hold_first_ablation(monkeypatch)
    got = record(window)
    tabs.ablation.heads.setText(ALL_ENC)
    click(qtbot, tabs.ablation.ablate_button)
    rid = tabs.ids["ablate"]
    qtbot.waitUntil(held.is_set, timeout=FAST_MS)
    qtbot.waitUntil(inputs.cancel_button.isEnabled, timeout=FAST_MS)
    # the ablation is on its own copy of the model; the app's model is not ablated
    assert models[0] is not ck.model and ablated_now(models[0]) and not ablated_now(ck.model)
    assert inputs.translate_button.isEnabled() and "ablation" in inputs.cancel_button.toolTip()
    inputs.text.setText(OTHER)
    do(qtbot, window, lambda: click(qtbot, inputs.translate_button))  # Translate: step 0
    assert window.vm.step == 0
    do(qtbot, window, lambda: click(qtbot, window.controls.step_button))  # Step ▶: one decoder step
    assert window.vm.step == 1
    do(qtbot, window, lambda: click(qtbot, window.controls.end_button))
    assert got["cancelled"] == [] and got["ablated"] == [] and ablated_now(models[0])  # still held
    assert inputs.cancel_button.isEnabled()  # the ablation still runs
    press_cancel(qtbot, window, held)
    qtbot.waitUntil(lambda: (rid, "ablate") in got["cancelled"], timeout=FAST_MS)
    qtbot.waitUntil(lambda: not inputs.cancel_button.isEnabled(), timeout=FAST_MS)
    # the translation made beside the ablation is the unablated model's (not the ablated one's)
    plain, gone = (
        translate(ck, OTHER),
        translate_ablated(ck, OTHER, [(1, h) for h in range(1, 5)] + [(2, h) for h in range(1, 5)], "enc").ablated,
    )
    lp = [s.logprob for s in window.result.steps]
    assert window.result.translation == plain.translation
    assert lp == pytest.approx([s.logprob for s in plain.steps], abs=1e-6)
    assert [s.logprob for s in gone.steps] != pytest.approx(lp, abs=1e-3)


@pytest.mark.parametrize("report_progress", [True, False], ids=["stops-in-load", "stops-after-load"])
def test_cancel_while_checkpoint_b_loads(qtbot, window, monkeypatch, tiny_checkpoint, second_checkpoint, report_progress):
    window.inputs.text.setText(TEXT)
    c, tabs, inputs = window.analysis.compare, window.analysis, window.inputs
    compare_checkpoints(qtbot, window, second_checkpoint, "cross", 0, 0)
    old, old_npz = c.outcome, c.npz_extra()
    assert old is not None and old.label_b == f"B: {second_checkpoint.name}" and old_npz
    loading, release, loads, calls = threading.Event(), threading.Event(), [], []
    real_load, real_translate = gui.workers.analysis_worker.load_checkpoint, gui.workers.analysis_worker.translate

    def slow_load(path, device="auto", progress=None):  # a long read that cannot be interrupted
        loading.set()
        assert release.wait(20), "the test never released the load"
        loads.append(path)
        return real_load(path, device=device, progress=progress if report_progress else None)

    def counted_translate(*args, **kwargs):
        calls.append(args[1])
        return real_translate(*args, **kwargs)

    monkeypatch.setattr(gui.workers.analysis_worker, "load_checkpoint", slow_load)
    monkeypatch.setattr(gui.workers.analysis_worker, "translate", counted_translate)
    got, answers = record(window), []
    tabs.answered.connect(answers.append)
    c.path_b.setText(str(tiny_checkpoint))  # not the cached B: it loads
    click(qtbot, c.compare_button)
    rid = tabs.ids["compare"]
    press_cancel(qtbot, window, loading)
    # idle at once, while the load is still running
    assert not release.is_set() and "comparison cancelled" in c.status.text()
    assert "comparison cancelled" in window.status.currentMessage() and answers == ["compare"]
    assert not inputs.cancel_button.isEnabled() and inputs.translate_button.isEnabled()
    assert c.outcome is old and same_npz(c.npz_extra(), old_npz)
    release.set()
    qtbot.waitUntil(lambda: (rid, "compare") in got["cancelled"], timeout=FAST_MS)
    qtbot.wait(50)  # the late answer reaches the GUI thread
    assert len(loads) == 1 and calls == [] and got["compared"] == []  # loaded, nothing decoded
    # stopped inside the load (at a progress report: B not kept) or right after it (B kept)
    assert (tabs.worker.second.path == tiny_checkpoint) is not report_progress
    assert c.outcome is old and same_npz(c.npz_extra(), old_npz) and answers == ["compare"]
    assert "comparison cancelled" in c.status.text() and not inputs.cancel_button.isEnabled()


def test_cancelled_load_never_reports_a_load_error(tiny_checkpoint):
    """A Cancel seen inside core's weight reading (which wraps exceptions in CheckpointError)
    surfaces as :class:`Cancelled`, not as "checkpoint B could not be loaded"."""
    w = gui.workers.analysis_worker.AnalysisWorker(lambda: None)
    polls = []

    def stop_in_weights():
        polls.append(True)
        if len(polls) == 3:  # config/tokenizers, building the model, then the first weights report
            raise Cancelled

    with pytest.raises(Cancelled):
        w.second_checkpoint(str(tiny_checkpoint), "cpu", stop_in_weights)
    assert w.second is None and len(polls) == 3
    assert w.second_checkpoint(str(tiny_checkpoint), "cpu").path == tiny_checkpoint  # loads without Cancel
