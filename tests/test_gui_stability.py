"""Hundreds of redraws at lecture size (6 layers × 8 heads, S = T = 40) must not crash or leak
widgets. Guards against the PySide6 6.12.0 refcount bug that aborted the process after ~100 steps."""

from __future__ import annotations

import torch

from core.decoding import Source
from core.maps import AttentionMaps
from core.masks import causal_mask
from core.translate import StepInfo, Translation
from gui.main_window import MainWindow


def synthetic_result(layers=6, heads=8, n=40) -> Translation:
    g = torch.Generator().manual_seed(0)

    def rand(*shape):
        return torch.rand(*shape, generator=g).softmax(-1)

    toks = [f"t{i}" for i in range(n)]
    maps = AttentionMaps(rand(layers, heads, n, n), rand(layers, heads, n, n).tril(), rand(layers, heads, n, n),
                         torch.zeros(n, dtype=torch.bool), torch.zeros(n, dtype=torch.bool), causal_mask(n), toks, toks)
    steps = [StepInfo(t, 5, [(t, 0.6), ("x", 0.3)]) for t in toks]
    return Translation(Source("x", list(range(n)), toks, n), "x", steps, maps, "greedy")


def test_many_redraws_do_not_crash(qtbot):
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    win.show_result(synthetic_result())
    for kind in ("cross", "decoder", "encoder"):
        win.set_view(kind)
        for k in range(0, 41):
            win.controls.set_position(k)
        for k in range(40, -1, -1):
            win.controls.set_position(k)
    assert len(win.grid.images) == 48
    win.close()
