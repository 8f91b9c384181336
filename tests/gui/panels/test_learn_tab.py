"""The Learn tab: a small Transformer trained on a toy task in the tab's worker thread, its
snapshots drawn with the main views' widgets and replayed with a slider; Pause, Step, Reset,
a bad pairs file, and closing the window while it trains. Tiny settings: seconds per test."""

from __future__ import annotations

import dataclasses
import time
from types import SimpleNamespace

import numpy as np
import pytest
from PySide6 import QtWidgets

from core.training.live_session import LiveSession, LiveSettings
from gui.panels.context import Style
from gui.panels.learn import LearnPanel
from gui.widgets.colormap import Colormap
from gui.workers.jobs import JobBoard
from tests.support.gui import open_window

TINY = LiveSettings(d_model=16, n_heads=2, layers=1, d_ff=32, batch_size=8, warmup=10)
WAIT_MS = 120_000  # the machine may be shared with a training run


def tiny(panel: LearnPanel, task: str = "copy", every: int = 2, until: int = 6) -> LearnPanel:
    c = panel.controls
    panel.base = TINY
    c.task.setCurrentIndex(c.task.findData(task))
    c.layers.setValue(TINY.layers)
    c.heads.setValue(TINY.n_heads)
    c.d_model.setValue(TINY.d_model)
    c.lr.setValue(TINY.peak_lr)
    c.every.setValue(every)
    c.until.setValue(until)
    return panel


@pytest.fixture
def panel(qtbot):
    busy: dict[str, bool] = {}
    tabs = QtWidgets.QTabWidget()
    ctx = SimpleNamespace(
        worker=SimpleNamespace(jobs=JobBoard()),
        style=Style(Colormap.named("viridis")),
        tabs=tabs,
        set_busy=lambda on, queue: busy.__setitem__(queue, on),
        busy=busy,
    )
    p = LearnPanel(ctx)
    tabs.addTab(p, p.tab_title)
    qtbot.addWidget(tabs)
    tabs.resize(1000, 800)
    tabs.show()
    yield tiny(p)
    p.stop()


def idle(panel: LearnPanel) -> bool:
    return panel.training is None


def reference_run(updates: list[int], causal: bool = True) -> list:
    """An independent session of the same task, settings and seed, evaluated at ``updates``."""
    s = LiveSession("copy", dataclasses.replace(TINY, causal=causal), seed=0)
    out = []
    for u in updates:
        s.step(u - s.updates)
        out.append(s.evaluate())
    return out


def test_trains_in_chunks_and_draws_each_snapshots_cross_attention(qtbot, panel):
    panel.train()
    qtbot.waitUntil(lambda: idle(panel) and len(panel.snapshots) == 4, timeout=WAIT_MS)
    assert [s.updates for s in panel.snapshots] == [0, 2, 4, 6]
    assert panel.ctx.busy["learn"] is False and "reached update 6" in panel.status.text()
    refs = reference_run([0, 2, 4, 6])
    for snap, ref in zip(panel.snapshots, refs):
        np.testing.assert_array_equal(snap.evaluation.maps.cross, ref.maps.cross)
        assert snap.evaluation.heldout_nll == ref.heldout_nll
    last = panel.snapshots[-1].evaluation
    assert panel.slider.value() == 3 and panel.view.shown[0] == 3
    key = last.best_head  # "enlarge the best head" is on
    np.testing.assert_array_equal(panel.view.heatmap.matrix, last.maps.cross[key])
    assert panel.view.heatmap.row_tokens == last.maps.tgt_tokens and panel.view.heatmap.col_tokens == last.maps.src_tokens
    assert panel.view.heatmap.row_tokens[0] == "[BOS]" and panel.view.heatmap.col_tokens[-1] == "[EOS]"
    cells = panel.view.grid.cells
    assert [c.key for c in cells] == [(0, 0), (0, 1)]
    for c in cells:
        np.testing.assert_array_equal(c.matrix, last.maps.cross[c.key])
        assert c.mask is None
    np.testing.assert_allclose(panel.view.heatmap.matrix.sum(axis=1), 1.0, rtol=1e-5)  # rows are queries


def test_scrubbing_shows_the_chosen_snapshot_and_the_decoder_mask_is_hatched(qtbot, panel):
    panel.train()
    qtbot.waitUntil(lambda: idle(panel) and len(panel.snapshots) == 4, timeout=WAIT_MS)
    panel.controls.follow_best.setChecked(False)
    panel.view.clicked.emit((0, 1))  # as a click on the grid's second cell
    for i in (1, 0, 2):
        panel.slider.setValue(i)
        ev = panel.snapshots[i].evaluation
        np.testing.assert_array_equal(panel.view.heatmap.matrix, ev.maps.cross[0, 1])
        assert panel.view.curves.markers[0].value() == panel.snapshots[i].updates
        assert panel.where.text() == f"{i + 1}/4 · update {panel.snapshots[i].updates}"
    assert not np.array_equal(panel.snapshots[0].evaluation.maps.cross, panel.snapshots[2].evaluation.maps.cross)
    panel.controls.kind.setCurrentIndex(panel.controls.kind.findData("decoder"))
    ev = panel.snapshots[2].evaluation
    np.testing.assert_array_equal(panel.view.heatmap.matrix, ev.maps.decoder_self[0, 1])
    t = ev.maps.decoder_self.shape[-1]
    np.testing.assert_array_equal(panel.view.heatmap.mask, np.triu(np.ones((t, t), dtype=bool), 1))  # True = masked
    assert panel.view.heatmap.matrix_image.hatch is not None
    assert np.all(panel.view.heatmap.matrix[panel.view.heatmap.mask] == 0)


def test_pause_step_resume_and_reset(qtbot, panel):
    panel.controls.every.setValue(1)
    panel.controls.until.setValue(10_000)
    panel.train()
    qtbot.waitUntil(lambda: len(panel.snapshots) >= 3, timeout=WAIT_MS)
    assert panel.controls.buttons["pause"].isEnabled() and panel.ctx.busy["learn"]
    panel.pause()
    qtbot.waitUntil(lambda: idle(panel), timeout=WAIT_MS)
    n, updates = len(panel.snapshots), panel.snapshots[-1].updates
    assert "paused at update" in panel.status.text() and panel.controls.buttons["resume"].isEnabled()
    qtbot.wait(500)
    assert len(panel.snapshots) == n  # nothing runs while paused
    panel.step()
    qtbot.waitUntil(lambda: len(panel.snapshots) == n + 1, timeout=WAIT_MS)
    assert panel.snapshots[-1].updates == updates + 1
    assert [s.updates for s in panel.snapshots] == list(range(updates + 2))  # every one kept, in order
    panel.resume()
    qtbot.waitUntil(lambda: panel.snapshots[-1].updates >= updates + 3, timeout=WAIT_MS)
    panel.reset()
    qtbot.waitUntil(lambda: len(panel.snapshots) == 1 and idle(panel), timeout=WAIT_MS)
    qtbot.wait(300)  # a late answer of the run before the reset is dropped
    assert [s.updates for s in panel.snapshots] == [0]
    np.testing.assert_array_equal(panel.snapshots[0].evaluation.maps.cross, reference_run([0])[0].maps.cross)
    assert not panel.slider.isEnabled()


def test_a_bad_pairs_file_is_reported_and_the_run_is_kept(qtbot, panel, tmp_path):
    panel.train()
    qtbot.waitUntil(lambda: idle(panel) and len(panel.snapshots) == 4, timeout=WAIT_MS)
    before = list(panel.snapshots)
    bad = tmp_path / "three.tsv"
    bad.write_text("가\ta\n나\tb\n다\tc\n", encoding="utf-8")
    panel.set_pairs_file(bad)
    panel.train()
    qtbot.waitUntil(lambda: "⚠" in panel.status.text(), timeout=WAIT_MS)
    assert "3 pairs" in panel.status.text() and "at least 10" in panel.status.text() and "kept" in panel.status.text()
    qtbot.wait(300)
    assert panel.snapshots == before and idle(panel) and panel.worker.session.updates == 6  # never trained on
    np.testing.assert_array_equal(panel.view.heatmap.matrix, before[-1].evaluation.maps.cross[before[-1].evaluation.best_head])


def test_the_learn_tab_in_the_window_and_closing_while_it_trains(qtbot, tiny_checkpoint):
    win = open_window(qtbot, tiny_checkpoint)
    tabs = win.live.tabs
    assert "Learn" in [tabs.tabText(k) for k in range(tabs.count())] and not win.slots.is_built("learn")
    panel = tiny(win.slots.get("learn"), every=1, until=100_000)
    panel.train()
    qtbot.waitUntil(lambda: len(panel.snapshots) >= 2, timeout=WAIT_MS)
    assert panel.thread.isRunning()
    t0 = time.perf_counter()
    win.close()
    closed_s = time.perf_counter() - t0
    assert panel.thread.isFinished(), f"the training thread still runs after close ({closed_s:.1f} s)"
    assert panel.worker.session.updates < 100_000


def test_export_writes_a_frame_per_snapshot_and_a_gif_or_says_why_not(qtbot, panel, tmp_path):
    panel.train()
    qtbot.waitUntil(lambda: idle(panel) and len(panel.snapshots) == 4, timeout=WAIT_MS)
    blocker = tmp_path / "a file"
    blocker.write_text("not a folder", encoding="utf-8")
    panel.export(blocker / "frames")
    assert "⚠" in panel.status.text() and "cannot make the folder" in panel.status.text()
    panel.export(tmp_path / "frames")
    qtbot.waitUntil(lambda: panel.exporting is None, timeout=WAIT_MS)
    assert panel.status.text() == f"wrote 4 frames and {tmp_path / 'frames' / 'learning.gif'}"
    assert sorted(p.name for p in (tmp_path / "frames").iterdir()) == [f"frame_00{i}.png" for i in range(4)] + ["learning.gif"]
    assert panel.view.shown[0] == 3  # the tab's own view was not touched
