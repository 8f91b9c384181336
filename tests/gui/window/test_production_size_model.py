"""A production-size model in the app: a 6 × 8 grid stays legible, loading reports progress
from the worker thread while the window keeps handling events, the status bar names the model."""

from __future__ import annotations

import numpy as np
import torch
from PySide6 import QtCore

from core.checkpoints.checkpoint import load_checkpoint, save_checkpoint
from core.transformer.model import Transformer
from gui.app import register_fonts
from gui.state.view_spec import Cell
from gui.widgets.colormap import Colormap
from gui.widgets.head_grid import HeadGrid
from gui.window.main_window import MainWindow
from tests.support import tiny_config


def _cells(n_layers, n_heads):
    rng = np.random.default_rng(0)
    return [
        Cell(f"L{li + 1} H{hi + 1}", rng.random((5, 7)).astype(np.float32), None, (li, hi))
        for li in range(n_layers)
        for hi in range(n_heads)
    ]


def test_six_by_eight_grid_uses_headers_not_48_titles(qtbot):
    grid = HeadGrid(Colormap.named("viridis"))
    qtbot.addWidget(grid)
    grid.resize(500, 520)
    grid.selected = (1, 2)
    cells = _cells(6, 8)
    grid.set_cells(cells, 8)
    grid.show()
    assert grid.compact and len(grid.images) == 48 and grid.labels == []
    texts = [h.text for h in grid.headers]
    assert texts == [f"H{i}" for i in range(1, 9)] + [f"L{i}" for i in range(1, 7)]
    for cell, im in zip(cells, grid.images):  # each thumbnail shows its own matrix
        np.testing.assert_array_equal(im.image.image, cell.matrix)
    framed = [v.border is not None and v.border.style() != QtCore.Qt.PenStyle.NoPen for v in grid.views]
    assert framed.index(True) == 1 * 8 + 2 and sum(framed) == 1
    small = HeadGrid(Colormap.named("viridis"))  # a 2 × 4 grid keeps a title per thumbnail
    qtbot.addWidget(small)
    small.set_cells(_cells(2, 4), 4)
    assert not small.compact and [lab.text for lab in small.labels][:2] == ["L1 H1", "L1 H2"]


def _big_checkpoint(tmp_path, tiny_tokenizers):
    src_tok, tgt_tok = tiny_tokenizers
    torch.manual_seed(0)
    c = tiny_config(
        src_vocab_size=src_tok.vocab_size,
        tgt_vocab_size=tgt_tok.vocab_size,
        d_model=256,
        n_heads=8,
        n_encoder_layers=6,
        n_decoder_layers=6,
        d_ff=1024,
        activation="swish",
        positional="sinusoidal_halves",
    )
    return save_checkpoint(tmp_path / "big-6x8", Transformer(c).eval(), src_tok, tgt_tok)


def test_load_progress_is_reported_in_order(tmp_path, tiny_tokenizers):
    path = _big_checkpoint(tmp_path, tiny_tokenizers)
    seen: list[tuple[str, float]] = []
    ck = load_checkpoint(path, device="cpu", progress=lambda m, f: seen.append((m, f)))
    fractions = [f for _, f in seen]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
    assert any("tensors" in m for m, _ in seen) and ck.config.n_heads == 8


def test_window_stays_live_while_loading_and_names_the_model(qtbot, tmp_path, tiny_tokenizers):
    path = _big_checkpoint(tmp_path, tiny_tokenizers)
    win = MainWindow(font_family=register_fonts())
    qtbot.addWidget(win)
    win.show()
    ticks, progress = [], []
    timer = QtCore.QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    win.worker.load_progress.connect(lambda m, f: progress.append(f))
    timer.start(5)
    with qtbot.waitSignal(win.worker.loaded, timeout=60000):
        win.load_checkpoint(str(path), "cpu")
        assert win.load_bar.isVisible()
    timer.stop()
    qtbot.waitUntil(lambda: not win.load_bar.isVisible(), timeout=5000)
    assert progress and progress[-1] == 1.0
    assert len(ticks) >= 2  # the GUI thread ran its event loop during the load
    msg = win.status.currentMessage()
    assert "big-6x8" in msg and "6+6 layers × 8 heads" in msg and "d_model 256" in msg
    win.close()
