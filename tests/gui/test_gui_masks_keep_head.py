"""Passing through the Masks view (which uses the selection as a mask index) keeps the enlarged
head: V in Present mode cycles encoder → decoder → cross → masks, and a lecturer following one
head through the views got layer 1, head 1 after the Masks view instead."""

from __future__ import annotations

from PySide6 import QtCore

from gui.state.view_model import ViewModel
from gui.window.view_menu import toggle_present
from tests.support.gui import type_and_translate


def test_view_model_restores_the_head_after_masks():
    vm = ViewModel()
    vm.set_kind("cross")
    vm.select(1, 2)
    vm.set_kind("masks")
    assert vm.selected == (0, 0)  # the first mask
    vm.select(2, 0)  # the third mask
    vm.set_kind("encoder")
    assert vm.selected == (1, 2)
    vm.set_kind("decoder")
    vm.select(0, 3)
    vm.set_kind("masks")
    vm.set_kind("masks")  # choosing Masks again changes nothing remembered
    vm.set_kind("cross")
    assert vm.selected == (0, 3)


def test_present_v_keeps_the_head_through_masks(qtbot, window):
    type_and_translate(qtbot, window)
    window.set_view("cross")
    window.select(1, 2)
    toggle_present(window)
    pw = window.present_window
    titles = []
    for _ in range(4):  # cross → masks → encoder → decoder → cross
        qtbot.keyClick(pw, QtCore.Qt.Key.Key_V)
        titles.append(pw.heatmap.plot.titleLabel.text)
    assert titles[0].startswith("decoder self mask given")
    assert [t.split(" — ")[-1] for t in titles[1:]] == ["layer 2 / 2, head 3 / 4"] * 3, titles
    assert titles[3].startswith("Cross-attention") and window.vm.selected == (1, 2)
    pw.close()
