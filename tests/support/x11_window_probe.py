"""Run under a real X server (Xvfb, with or without a window manager) by tests/gui/window/test_real_x_windows.py:
open the main window as ``main.py`` does and Present mode, then print their geometries as JSON.

    python -m tests.support.x11_window_probe WIDTH HEIGHT
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    w, h = int(sys.argv[1]), int(sys.argv[2])
    from PySide6 import QtCore, QtWidgets

    from gui.app import register_fonts
    from gui.window.main_window import MainWindow
    from gui.window.screen_fit import fit_to_screen, refit_with_frame
    from gui.window.view_menu import toggle_present

    app = QtWidgets.QApplication(sys.argv[:1])
    win = MainWindow(font_family=register_fonts())
    win.resize(*fit_to_screen((w, h), app.primaryScreen()))
    win.show()

    def wait(ms: int) -> None:
        loop = QtCore.QEventLoop()
        QtCore.QTimer.singleShot(ms, loop.quit)
        loop.exec()

    wait(800)  # the window manager frames it
    refit_with_frame(win, (w, h))
    wait(500)
    free = app.primaryScreen().availableGeometry()
    frame = win.frameGeometry()
    toggle_present(win)
    wait(800)
    pw = win.present_window
    out = {
        "free": [free.x(), free.y(), free.width(), free.height()],
        "frame": [frame.x(), frame.y(), frame.width(), frame.height()],
        "present": [pw.geometry().x(), pw.geometry().y(), pw.geometry().width(), pw.geometry().height()],
        "screen": [app.primaryScreen().geometry().width(), app.primaryScreen().geometry().height()],
    }
    print(json.dumps(out))
    pw.close()
    win.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
