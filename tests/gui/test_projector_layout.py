"""The window on a projector: the enlarged map first, docks that fit the screen, never larger
than the screen. (Screenshots at 1280×720 … 2560×1440, 100 % and 200 %: docs/layout.md.)"""

from __future__ import annotations

from PySide6 import QtCore

from gui.app import fit_to_screen
from tests.support.gui import open_window, type_and_translate


class _Screen:
    def __init__(self, w: int, h: int) -> None:
        self.rect = QtCore.QRect(0, 0, w, h)

    def availableGeometry(self):  # noqa: N802 (Qt naming)
        return self.rect


def test_the_window_never_opens_larger_than_the_screen():
    assert fit_to_screen((1600, 950), _Screen(1280, 680)) == (1280, 680)
    assert fit_to_screen((1600, 950), _Screen(2560, 1400)) == (1600, 950)
    assert fit_to_screen((900, 2000), _Screen(1366, 728)) == (900, 728)
    assert fit_to_screen((1600, 950), None) == (1600, 950)


def _fully_visible(widget) -> bool:
    """Shown, and its whole rectangle lies inside the window (nothing scrolled or cut off)."""
    win = widget.window()
    rect = QtCore.QRect(widget.mapTo(win, QtCore.QPoint(0, 0)), widget.size())
    return widget.isVisible() and win.rect().contains(rect)


def _on_screen(widget) -> bool:
    win = widget.window()
    return widget.isVisible() and win.rect().intersects(QtCore.QRect(widget.mapTo(win, QtCore.QPoint(0, 0)),
                                                                    widget.size()))


def test_at_1280x720_the_grid_and_the_larger_map_show_without_scrolling(qtbot, tiny_checkpoint):
    win = open_window(qtbot, tiny_checkpoint, size=(1280, 720))
    type_and_translate(qtbot, win, "비가 와서 우리는 집에 있었어요.")
    qtbot.wait(50)
    assert (win.width(), win.height()) == (1280, 720)
    scroll = win.centralWidget()
    assert scroll.horizontalScrollBar().maximum() == 0 and scroll.verticalScrollBar().maximum() == 0
    assert _fully_visible(win.grid) and _fully_visible(win.heatmap)
    hm, grid = win.heatmap, win.grid
    assert hm.width() * hm.height() > grid.width() * grid.height()  # the map is the largest element
    shown_masks = win.masks_dock.widget().viewport()  # the masks scroll inside their dock
    for other in (win.topk, win.inputs, shown_masks):  # (a dock behind another's tab lies off screen)
        assert not _on_screen(other) or hm.width() * hm.height() > other.width() * other.height()
    assert win.controls.isVisible() and _fully_visible(win.inputs.translate_button)
    assert win.masks_dock in win.tabifiedDockWidgets(win.tabs_dock)  # short screen: masks join the tabs


def test_docks_can_be_hidden_and_shown_from_the_view_menu(qtbot, tiny_checkpoint):
    win = open_window(qtbot, tiny_checkpoint, size=(1600, 950))
    actions = {a.text(): a for a in win.panels_menu.actions()}
    assert set(actions) == {"Next-token candidates", "Experiments and analysis", "Masks given"}
    assert win.dockWidgetArea(win.masks_dock) == QtCore.Qt.DockWidgetArea.BottomDockWidgetArea  # tall: below
    width_before = win.heatmap.width()
    actions["Next-token candidates"].trigger()
    actions["Experiments and analysis"].trigger()
    qtbot.waitUntil(lambda: not win.topk_dock.isVisible() and not win.tabs_dock.isVisible())
    qtbot.waitUntil(lambda: win.heatmap.width() > width_before)  # the map takes the room
    actions["Next-token candidates"].trigger()
    qtbot.waitUntil(win.topk_dock.isVisible)
