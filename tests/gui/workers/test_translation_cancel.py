"""Cancellation by request id (gui/workers/model_worker.py): Cancel, a newer request and closing the window drop
the running translation *and* the ones still waiting in the worker's queue (a waiting request is
answered with ``cancelled`` and never runs)."""

from __future__ import annotations

import threading
import time

import pytest
from PySide6 import QtCore

import gui.workers.model_worker
from gui.window.main_window import MainWindow
from gui.workers.model_worker import TranslateRequest
from tests.core.test_decoding import SENTENCES


class FakeTranslate:
    """Stands in for the worker's start of a request (gui.state.live_commands.start): texts starting
    with "block" poll ``should_stop`` until cancelled (a search that never ends by itself);
    others start the real live decoder."""

    def __init__(self, real):
        self.real, self.calls, self.stopped = real, [], []

    def __call__(self, ckpt, req, should_stop=None):
        text = req.text
        self.calls.append(text)
        if not text.startswith("block"):
            return self.real(ckpt, req, should_stop)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                should_stop()
            except Exception:
                self.stopped.append(text)
                raise
            time.sleep(0.005)
        raise AssertionError("the search was never cancelled")


@pytest.fixture
def app(qtbot, tiny_checkpoint, monkeypatch):
    win = MainWindow()
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.worker.loaded, timeout=20000):
        win.load_checkpoint(str(tiny_checkpoint), "cpu")
    fake = FakeTranslate(gui.workers.model_worker.start)
    monkeypatch.setattr(gui.workers.model_worker, "start", fake)
    gate = threading.Event()  # a checkpoint load that cannot be interrupted, until the gate opens
    real_load = gui.workers.model_worker.load_checkpoint
    monkeypatch.setattr(
        gui.workers.model_worker,
        "load_checkpoint",
        lambda path, device="auto", **kw: gate.wait(20) and real_load(path, device, **kw),
    )
    events = {"cancelled": [], "translated": []}
    win.worker.cancelled.connect(events["cancelled"].append)
    win.worker.translated.connect(lambda rid, result, ms: events["translated"].append(rid))
    yield win, fake, gate, events, str(tiny_checkpoint)
    gate.set()
    win.close()


def test_cancel_drops_a_waiting_request_and_the_running_one(qtbot, app):
    win, fake, gate, events, path = app
    win.load_checkpoint(path, "cpu")  # busy with a load that cannot be interrupted
    qtbot.waitUntil(win.inputs.cancel_button.isEnabled, timeout=5000)
    win.inputs.text.setText(SENTENCES[0])
    waiting = win.translate()
    qtbot.mouseClick(win.inputs.cancel_button, QtCore.Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(win.worker.cancelled, timeout=20000, check_params_cb=lambda rid: rid == waiting):
        gate.set()
    assert fake.calls == [] and events["translated"] == [] and win.result is None

    win.inputs.text.setText("block: a long search")
    running = win.translate()
    qtbot.waitUntil(lambda: fake.calls == ["block: a long search"], timeout=5000)
    qtbot.waitUntil(win.inputs.cancel_button.isEnabled, timeout=5000)  # the window has seen "busy"
    qtbot.mouseClick(win.inputs.cancel_button, QtCore.Qt.MouseButton.LeftButton)
    # wait on recorded state, not on one emission: other requests may be answered "cancelled" too
    qtbot.waitUntil(lambda: running in events["cancelled"] and "cancelled" in win.status.currentMessage(), timeout=20000)
    assert fake.stopped == ["block: a long search"] and events["translated"] == []


def test_a_newer_request_drops_the_waiting_and_the_running_ones(qtbot, app):
    win, fake, gate, events, path = app
    win.load_checkpoint(path, "cpu")
    qtbot.waitUntil(win.inputs.cancel_button.isEnabled, timeout=5000)
    win.inputs.text.setText(SENTENCES[0])
    first = win.translate()  # waits behind the load ...
    win.inputs.text.setText(SENTENCES[1])
    with qtbot.waitSignal(win.worker.translated, timeout=30000) as got:
        second = win.translate()  # ... and is superseded before it starts
        gate.set()
    assert got.args[0] == second and events["translated"] == [second]
    assert fake.calls == [SENTENCES[1]] and first in events["cancelled"]
    # the window handles the worker's signal in its own queued slot: wait for it, don't race it
    qtbot.waitUntil(lambda: win.result is not None and win.result.source.text == SENTENCES[1], timeout=10000)

    win.inputs.text.setText("block: a long search")
    running = win.translate()
    qtbot.waitUntil(lambda: "block: a long search" in fake.calls, timeout=5000)
    win.inputs.text.setText(SENTENCES[2])
    with qtbot.waitSignal(win.worker.translated, timeout=30000) as got:
        newest = win.translate()
    assert got.args[0] == newest and fake.stopped == ["block: a long search"]
    assert running in events["cancelled"]
    qtbot.waitUntil(lambda: win.result is not None and win.result.source.text == SENTENCES[2], timeout=10000)


def test_closing_drops_waiting_requests_and_stops_the_running_one(qtbot, app):
    win, fake, gate, events, path = app
    win.inputs.text.setText("block: a long search")
    running = win.translate()
    qtbot.waitUntil(lambda: fake.calls == ["block: a long search"], timeout=5000)
    for rid in (running + 1, running + 2):  # requests queued behind it (as the headless path queues them)
        win.request_translate.emit(rid, TranslateRequest(SENTENCES[0]))
    win.request_load.emit(path, "cpu", "fp32")  # a queued load is dropped too (the gate stays shut)
    win.close()
    assert win.thread.isFinished()
    assert fake.calls == ["block: a long search"] and fake.stopped == ["block: a long search"]
    assert events["translated"] == [] and events["cancelled"][0] == running
    assert set(events["cancelled"]) <= {running, running + 1, running + 2}  # the waiting ones never ran
