"""Cancel stops an ablation or a comparison (gui/workers/analysis_worker.py, the model worker's request-id
cancellation with the queues "ablate" and "compare"): the Cancel button is enabled while the run
is on, the run stops (an ablation at its next decoder step, a comparison between its two runs),
``cancelled`` arrives for that request id, the tab's last result stays and the status bar says so.

The runs are the real core code; only the ``should_stop`` they poll (or the return of the first
translation) is held until the test has pressed Cancel, so the run is certainly still going.
"""

from __future__ import annotations

import threading
import time

import numpy as np
from PySide6 import QtCore

import gui.workers.analysis_worker
from gui.workers.model_worker import Cancelled
from tests.support.gui import ablate, compare

TEXT = "집에 누군가 있어?"
OTHER = "제발 앉아."
HOLD_S = 20  # the held run fails the test (AssertionError in the worker) if Cancel never arrives


def ablated_now(model) -> bool:
    return any(m.ablated_heads for m in model.modules() if hasattr(m, "ablated_heads"))


def wait_until_cancelled(should_stop) -> None:
    """Poll the real ``should_stop`` until it raises :class:`Cancelled` (then re-raise it)."""
    deadline = time.monotonic() + HOLD_S
    while time.monotonic() < deadline:
        should_stop()
        time.sleep(0.005)
    raise AssertionError("the run was never cancelled")


def record(window):
    """Lists of the analysis worker's answers as (request id, panel); appended on its thread."""
    got = {"cancelled": [], "ablated": [], "compared": []}
    w = window.analysis.worker
    w.cancelled.connect(lambda rid, panel: got["cancelled"].append((rid, panel)))
    w.ablated.connect(lambda rid, rep, ms: got["ablated"].append(rid))
    w.compared.connect(lambda rid, out, ms: got["compared"].append(rid))
    return got


def press_cancel(qtbot, window, held: threading.Event) -> None:
    qtbot.waitUntil(held.is_set, timeout=20000)  # the run is inside core, held
    qtbot.waitUntil(window.inputs.cancel_button.isEnabled, timeout=5000)  # the window has seen "busy"
    qtbot.mouseClick(window.inputs.cancel_button, QtCore.Qt.MouseButton.LeftButton)


def same_npz(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def test_cancel_stops_a_running_ablation_and_keeps_the_last_result(qtbot, window, monkeypatch):
    window.inputs.text.setText(TEXT)
    p, tabs = window.analysis.ablation, window.analysis
    ablate(qtbot, window, "1:2", "enc")
    old, old_npz, old_summary = p.report, p.npz_extra(), p.summary.text()
    assert old is not None and old.result.heads == [(1, 2)] and old_npz

    held, polls_ablated, models = threading.Event(), [], []
    real = gui.workers.analysis_worker.ablation_report

    def held_report(ckpt, text, heads, kind, should_stop=None, **options):
        models.append(ckpt.model)  # the analysis worker's own copy of the model

        def stop():  # the first poll with the heads ablated waits for Cancel
            if ablated_now(ckpt.model):
                polls_ablated.append(True)
                if not held.is_set():
                    held.set()
                    wait_until_cancelled(should_stop)
            should_stop()

        return real(ckpt, text, heads, kind, should_stop=stop, **options)

    monkeypatch.setattr(gui.workers.analysis_worker, "ablation_report", held_report)
    got = record(window)
    p.heads.setText("2:1")
    p.sync_boxes("2:1")
    qtbot.mouseClick(p.ablate_button, QtCore.Qt.MouseButton.LeftButton)
    rid = tabs.ids["ablate"]
    press_cancel(qtbot, window, held)
    # wait on recorded ids and the window's own handling, not on one emission
    qtbot.waitUntil(
        lambda: (rid, "ablate") in got["cancelled"] and "ablation cancelled" in window.status.currentMessage(), timeout=20000
    )
    assert got["ablated"] == [] and polls_ablated == [True]  # stopped at that decoder step
    assert len(models) == 1 and not ablated_now(models[0])  # the ablation was undone on the way out
    assert models[0] is not window.worker.checkpoint.model and not ablated_now(window.worker.checkpoint.model)
    assert p.report is old and same_npz(p.npz_extra(), old_npz) and p.summary.text() == old_summary
    assert "cancelled" in p.status.text() and p.heads.text() == "1:2"  # the ticks show the kept result
    qtbot.waitUntil(lambda: not window.inputs.cancel_button.isEnabled(), timeout=5000)

    monkeypatch.setattr(gui.workers.analysis_worker, "ablation_report", real)
    ablate(qtbot, window, "2:1", "enc")  # the next ablation runs normally
    assert p.report is not old and p.report.result.heads == [(2, 1)]
    # the recorder runs on the worker's thread after the GUI's queued answer was posted: wait for it
    qtbot.waitUntil(lambda: tabs.ids["ablate"] in got["ablated"], timeout=5000)


def test_cancel_stops_a_comparison_between_its_two_runs(qtbot, window, monkeypatch):
    window.inputs.text.setText(TEXT)
    c, tabs = window.analysis.compare, window.analysis
    c.set_mode("inputs")
    c.text_b.setText(OTHER)
    compare(qtbot, window)
    old, old_npz = c.outcome, c.npz_extra()
    assert old is not None and old.b.source.text == OTHER and old_npz

    held, calls = threading.Event(), []
    real = gui.workers.analysis_worker.translate

    def held_translate(ckpt, text, should_stop=None, **options):
        calls.append(text)
        out = real(ckpt, text, should_stop=should_stop, **options)  # run A completes ...
        held.set()
        try:
            wait_until_cancelled(should_stop)  # ... and returns only once Cancel was pressed
        except Cancelled:
            pass
        return out

    monkeypatch.setattr(gui.workers.analysis_worker, "translate", held_translate)
    got = record(window)
    c.text_b.setText("앉아.")
    qtbot.mouseClick(c.compare_button, QtCore.Qt.MouseButton.LeftButton)
    rid = tabs.ids["compare"]
    press_cancel(qtbot, window, held)
    qtbot.waitUntil(
        lambda: (rid, "compare") in got["cancelled"] and "comparison cancelled" in window.status.currentMessage(), timeout=20000
    )
    assert calls == [TEXT] and got["compared"] == []  # run B never started
    assert c.outcome is old and same_npz(c.npz_extra(), old_npz) and "cancelled" in c.status.text()


def test_cancel_drops_a_waiting_ablation_before_it_runs(qtbot, window, monkeypatch):
    """An ablation queued behind a held comparison is answered ``cancelled`` and never runs."""
    window.inputs.text.setText(TEXT)
    tabs = window.analysis
    tabs.compare.set_mode("inputs")
    tabs.compare.text_b.setText(OTHER)
    held, ran = threading.Event(), []
    real = gui.workers.analysis_worker.translate

    def held_translate(ckpt, text, should_stop=None, **options):
        held.set()
        wait_until_cancelled(should_stop)
        return real(ckpt, text, should_stop=should_stop, **options)

    monkeypatch.setattr(gui.workers.analysis_worker, "translate", held_translate)
    monkeypatch.setattr(gui.workers.analysis_worker, "ablation_report", lambda *a, **k: ran.append(a))
    got = record(window)
    qtbot.mouseClick(tabs.compare.compare_button, QtCore.Qt.MouseButton.LeftButton)
    waiting = tabs.ablate()  # queued behind the held comparison on the worker thread
    running = tabs.ids["compare"]
    press_cancel(qtbot, window, held)
    qtbot.waitUntil(lambda: {(running, "compare"), (waiting, "ablate")} <= set(got["cancelled"]), timeout=20000)
    assert ran == [] and got["ablated"] == [] and got["compared"] == []
    assert tabs.ablation.report is None and tabs.compare.outcome is None  # nothing was shown before either
