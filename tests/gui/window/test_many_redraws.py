"""Hundreds of redraws at lecture size (6 layers × 8 heads, S = T = 40) must not crash or leak
widgets. Guards against the PySide6 6.12.0 refcount bug that aborted the process after ~100 steps."""

from __future__ import annotations

from bench.run import synthetic_translation
from gui.window.main_window import MainWindow


def test_many_redraws_do_not_crash(qtbot):
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    win.show_result(synthetic_translation())
    for kind in ("cross", "decoder", "encoder"):
        win.set_view(kind)
        for k in range(0, 41):
            win.controls.set_position(k)
        for k in range(40, -1, -1):
            win.controls.set_position(k)
    assert len(win.grid.images) == 48 + 6 + 1  # the heads, a derived mean per layer, the encoder rollout
    win.close()
