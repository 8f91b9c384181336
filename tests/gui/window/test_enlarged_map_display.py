"""The enlarged map as a presenter reads it: no axes before the first result (and no jump when they
come), the hover read-out, per-map contrast and the values printed in the cells."""

from __future__ import annotations

import pytest
from PySide6 import QtCore, QtWidgets

from gui.window.main_window import HOVER_HINT
from tests.support.gui import do, type_and_translate


def test_no_axes_before_the_first_result_and_no_jump(qtbot, window):
    assert not window.heatmap.plot.getAxis("left").isVisible()
    assert not window.heatmap.colorbar.isVisible()
    assert not window.topk.getAxis("left").isVisible() and not window.topk.getAxis("bottom").isVisible()
    assert not any(v.getAxis("bottom").isVisible() for v in window.masks.views())
    top = window.controls.mapTo(window, QtCore.QPoint(0, 0)).y()
    type_and_translate(qtbot, window)
    qtbot.wait(50)
    assert window.heatmap.plot.getAxis("left").isVisible() and window.heatmap.colorbar.isVisible()
    assert window.controls.mapTo(window, QtCore.QPoint(0, 0)).y() == top  # the controls stay put


def test_hover_clears_on_leave_and_new_result_and_counts_from_one(qtbot, window):
    type_and_translate(qtbot, window)
    window.set_view("encoder")
    hm = window.heatmap
    centre = hm.view.mapViewToScene(QtCore.QPointF(0.5, 0.5))
    hm._on_mouse(centre)
    text = window.hover_label.text()
    assert text.startswith(f"query 1 ⟨{window.result.maps.src_tokens[0]}⟩ → key 1")
    QtWidgets.QApplication.sendEvent(hm, QtCore.QEvent(QtCore.QEvent.Type.Leave))
    assert window.hover_label.text() == HOVER_HINT
    hm._on_mouse(centre)
    assert window.hover_label.text() == text
    window.inputs.text.setText("외로워.")
    do(qtbot, window, window.translate)
    assert window.hover_label.text() == HOVER_HINT  # the old sentence's tokens are gone


def test_per_map_contrast_and_cell_values(qtbot, window):
    type_and_translate(qtbot, window)
    do(qtbot, window, lambda: window.controls.set_position(3))
    window.set_view("cross")
    k = window.controls.position
    layer, head = window.selected
    w = window.result.maps.cross[layer, head, :k].numpy()
    window.scale_actions["per-map"].trigger()
    hm = window.heatmap
    assert hm.levels == pytest.approx((float(w.min()), float(w.max())))
    assert tuple(hm.image.levels) == pytest.approx(hm.levels)
    assert "per-map range" in hm.colorbar.axis.labelText
    rows, cols = w.shape
    shown = hm.values.shown()
    assert len(shown) == rows * cols <= 16 * 16
    assert shown[0] in (f"{w[0, 0]:.2f}", f"{w[0, 0]:.2f}"[1:])
    window.scale_actions["fixed"].trigger()
    assert hm.levels == (0.0, 1.0) and "fixed [0, 1]" in hm.colorbar.axis.labelText


def test_cell_text_never_prints_a_near_one_weight_as_zero():
    from gui.widgets.cell_values import cell_text

    assert [cell_text(v) for v in (0.0, 0.254, 0.994, 0.996, 1.0)] == [".00", ".25", ".99", "1.0", "1.0"]
