"""Always the truth on screen: while the next map is computed (a new translation, a step, a lecture
page) the enlarged map is dimmed with a "computing …" line, here and in Present mode, and a lecture
page's caption is never shown over the previous page's map. A slow model stub makes it observable."""

from __future__ import annotations

import threading

import pytest

import gui.workers.model_worker
from gui.state.lecture import load_lecture
from tests.gui.lecture.test_lecture_format import TINY_LECTURE
from tests.gui.lecture.test_presenting_a_lecture import _wait_shown
from tests.support.gui import TEXT, WORK_TIMEOUT_MS, do


@pytest.fixture
def gate(monkeypatch):
    """Translations wait until ``gate.set()`` (set again by the fixture's end)."""
    ev = threading.Event()
    real = gui.workers.model_worker.start

    def held(ckpt, req, should_stop=None):
        while not ev.wait(0.005):
            if should_stop is not None:
                should_stop()
        return real(ckpt, req, should_stop)

    monkeypatch.setattr(gui.workers.model_worker, "start", held)
    yield ev
    ev.set()


def test_the_map_is_marked_computing_until_the_new_result_is_drawn(qtbot, window, gate):
    from gui.window.view_menu import toggle_present

    gate.set()
    window.inputs.text.setText(TEXT)
    do(qtbot, window, window.translate)
    assert not window.heatmap.computing
    toggle_present(window)
    gate.clear()
    window.inputs.text.setText("제발 앉아.")
    window.translate()
    qtbot.wait(50)
    for hm in (window.heatmap, window.present_window.heatmap):
        assert hm.computing and hm._computing_label.isVisible() and hm.plot.opacity() < 1
        assert "computing" in hm._computing_label.text()
    assert window.vm.result.source.text == TEXT  # the old result is what is dimmed
    gate.set()
    qtbot.waitUntil(lambda: window.vm.result.source.text == "제발 앉아.", timeout=WORK_TIMEOUT_MS)
    for hm in (window.heatmap, window.present_window.heatmap):
        assert not hm.computing and not hm._computing_label.isVisible() and hm.plot.opacity() == 1
    window.present_window.close()


def test_a_lecture_caption_waits_for_its_own_map(qtbot, window, tmp_path, gate):
    from gui.window.lecture import open_lecture

    gate.set()
    path = tmp_path / "tiny.toml"
    path.write_text(TINY_LECTURE, encoding="utf-8")
    driver = open_lecture(window, load_lecture(path))
    _wait_shown(qtbot, driver, 0)
    assert "First caption." in driver.page.caption
    gate.clear()
    driver.next()  # Page Down: step 2 runs the model
    qtbot.wait(50)
    assert not driver.done and "Second caption" not in driver.page.caption  # never over step 1's map
    assert "Second caption" not in driver.bar_label.text() and window.heatmap.computing
    gate.set()
    _wait_shown(qtbot, driver, 1)
    assert "Second caption" in driver.page.caption and not window.heatmap.computing
