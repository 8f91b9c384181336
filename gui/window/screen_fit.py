"""Windows that fit the screen: the main window with its window-manager frame inside the screen's
available area (the status bar never below its edge)."""

from __future__ import annotations


def fit_to_screen(size: tuple[int, int], screen, frame: tuple[int, int] = (0, 0)) -> tuple[int, int]:
    """``size`` (logical pixels, the window's contents) shrunk so that the window with its
    window-manager ``frame`` (extra width and height of title bar and borders, pixels) fits the
    screen's available area (without task bars): the status bar is never below the screen's edge.
    Unchanged without a screen."""
    if screen is None:
        return size
    free = screen.availableGeometry()
    return min(size[0], free.width() - frame[0]), min(size[1], free.height() - frame[1])


def refit_with_frame(win, size: tuple[int, int]) -> None:
    """Once the window is shown and a window manager has framed it, shrink it again so that the
    frame fits too (before it is shown the frame is unknown; without a window manager it is 0)."""
    screen = win.screen()
    frame = (win.frameGeometry().width() - win.geometry().width(), win.frameGeometry().height() - win.geometry().height())
    fitted = fit_to_screen(size, screen, frame)
    if fitted != (win.width(), win.height()):
        win.resize(*fitted)
    free = screen.availableGeometry() if screen is not None else None
    if free is not None and not free.contains(win.frameGeometry()):
        win.move(free.topLeft())


__all__ = ["fit_to_screen", "refit_with_frame"]
