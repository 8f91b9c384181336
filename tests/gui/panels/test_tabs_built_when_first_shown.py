"""The Ablate heads / Compare and Inside one step tabs are built when first shown (the window's
start does not pay for tabs a user may never open), in their own places, with the model already
loaded and the colour map and scale already chosen."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from gui.window import view_menu as display
from tests.support.gui import open_window, type_and_translate


def titles(tabs) -> list[str]:
    return [tabs.tabText(k) for k in range(tabs.count())]


def test_a_tab_is_built_when_first_shown_in_its_place_and_catches_up(qtbot, tiny_checkpoint):
    win = open_window(qtbot, tiny_checkpoint)  # the model is loaded before any analysis tab exists
    tabs = win.live.tabs
    assert not win.slots.is_built("analysis") and not win.slots.is_built("inside")
    assert win.slots.is_built("heads") and win.slots.is_built("positional")
    before = titles(tabs)
    i = before.index("Ablate heads")
    assert before[i + 1] == "Compare" and "Inside one step" in before
    assert [p.name for p in win.panels] == ["positional", "heads"]  # what File → Export and Cancel reach
    win.set_colormap("cividis")  # chosen before the tab exists
    display.set_scale(win, "per-map")
    tabs.setCurrentIndex(i)  # the user opens the tab
    assert win.slots.is_built("analysis") and not win.slots.is_built("inside")
    p = win.analysis
    assert tabs.widget(i) is p.ablation and tabs.widget(i + 1) is p.compare and tabs.currentWidget() is p.ablation
    assert titles(tabs) == before
    cfg = win.worker.checkpoint.config
    assert (
        p.ablation.layers == {"enc": cfg.n_encoder_layers, "dec": cfg.n_decoder_layers, "cross": cfg.n_decoder_layers}
        and p.ablation.n_heads == cfg.n_heads
    )
    assert len(p.ablation.boxes) == cfg.n_encoder_layers * cfg.n_heads  # the encoder kind's grid of ticks
    lut = pg.colormap.get("cividis").getLookupTable(nPts=256)
    for m in (p.ablation.maps.a, p.compare.maps.b):
        np.testing.assert_array_equal(np.asarray(m.image.lut), lut)
        assert m.scale == "per-map"


def test_inside_built_after_a_translation_shows_that_translations_step(qtbot, tiny_checkpoint):
    win = open_window(qtbot, tiny_checkpoint)
    type_and_translate(qtbot, win)
    win.set_view("encoder")
    win.select(0, 1)
    tabs = win.live.tabs
    tabs.setCurrentIndex(titles(tabs).index("Inside one step"))
    panel = win.inside_panel
    assert tabs.currentWidget() is panel
    qtbot.waitUntil(lambda: panel.step is not None, timeout=30000)
    np.testing.assert_array_equal(panel.strips[4].matrix[0], win.heatmap.matrix[panel.query.value() - 1])


def test_a_row_clicked_before_the_inside_tab_was_built_is_its_query(qtbot, tiny_checkpoint):
    win = open_window(qtbot, tiny_checkpoint)
    type_and_translate(qtbot, win)
    win.set_view("cross")
    assert not win.slots.is_built("inside")
    win.heatmap.row_clicked.emit(2)  # the user clicks the third row of the enlarged map first
    tabs = win.live.tabs
    tabs.setCurrentIndex(titles(tabs).index("Inside one step"))
    panel = win.inside_panel
    assert panel.query.value() == 3
    qtbot.waitUntil(lambda: panel.step is not None, timeout=30000)
    np.testing.assert_array_equal(panel.strips[4].matrix[0], win.heatmap.matrix[2])
