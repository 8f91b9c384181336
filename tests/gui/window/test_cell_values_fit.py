"""Cell values (View → Print values) appear in maps up to 16 × 16 only where a value fits in its
cell (README: the values need room): in a smaller font than the map's when the cells are small
(down to 8 pt), never wider than the cell, and none when not even that fits; Present mode prints
every cell of the same map."""

from __future__ import annotations

import numpy as np
from PySide6 import QtGui

from gui.window.view_menu import toggle_present
from tests.support import ROOT
from tests.support.gui import do, open_window, type_and_translate


def visible_values(heatmap) -> list[str]:
    return heatmap.values.shown()


def test_values_need_room(qtbot, tiny_checkpoint):
    win = open_window(qtbot, tiny_checkpoint, (1600, 950))  # the app's default --size
    type_and_translate(qtbot, win)
    do(qtbot, win, lambda: win.inputs.pad_to.setValue(16))  # 16 source columns
    if win.controls.position != 8:
        do(qtbot, win, lambda: win.controls.set_position(8))  # 8 query rows
    win.set_view("cross")
    hm = win.heatmap
    rows, cols = np.asarray(hm.matrix).shape
    assert (rows, cols) == (8, 16)
    cell = hm.view.width() / cols
    shown = visible_values(hm)
    if cell < QtGui.QFontMetricsF(hm.font).horizontalAdvance("0.00") + 4:  # too narrow at the map's font
        assert shown == [] or hm.values.font.pointSize() < hm.font.pointSize()  # a smaller font, or no values
    if shown:  # never wider than its cell
        assert QtGui.QFontMetricsF(hm.values.font).horizontalAdvance("0.00") + 4 <= cell
    hm.resize(220, hm.height())  # so narrow that not even 8 pt fits: no values at all
    qtbot.waitUntil(
        lambda: hm.view.width() / cols < QtGui.QFontMetricsF(QtGui.QFont(hm.font.family(), 8)).horizontalAdvance("0.00") + 4,
        timeout=5000,
    )
    hm.set_matrix(*hm.drawn_args)
    assert visible_values(hm) == []
    toggle_present(win)
    pw = win.present_window
    pw.showNormal()
    pw.resize(1600, 950)
    qtbot.waitUntil(lambda: len(visible_values(pw.heatmap)) == rows * cols, timeout=5000)
    manual = " ".join((ROOT / "docs" / "manual.md").read_text(encoding="utf-8").split())
    assert "Maps up to 16 × 16 print each cell's value where it fits in its cell" in manual
    pw.close()
