"""Screenshots of the main window in the projector layout (View → Projector layout, F9), at the
default font and after Ctrl + three times, with what they show measured: the enlarged map's share
of the window's area, the token labels drawn on each axis against the tokens, and whether the map
and its colour bar lie inside the window. Prints one JSON line per screenshot.

Run from the repository root on a real X server with a window manager, as in docs/layout.md:

    xvfb-run -a -s "-screen 0 1280x720x24" bash -c \\
      "openbox & sleep 1; python docs/layout/projector_screenshots.py docs/layout; kill %1"

(``--checkpoint`` and ``--text`` choose another model and sentence; tests/gui/window/test_real_x_windows.py
runs it on a tiny model.)"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEXT = "선생님은 학생들에게 어려운 문제를 천천히 설명했다."  # 13 tokens and [EOS] for ko-en-nc: 14 source tokens


def wait(ms: int) -> None:
    from PySide6 import QtCore

    loop = QtCore.QEventLoop()
    QtCore.QTimer.singleShot(ms, loop.quit)
    loop.exec()


def inside(win, widget, rect=None) -> bool:
    """Whether ``rect`` (widget coordinates; default the whole widget) lies inside the window's rect."""
    from PySide6 import QtCore

    r = QtCore.QRect(QtCore.QPoint(0, 0), widget.size()) if rect is None else rect
    return widget.isVisible() and win.rect().contains(QtCore.QRect(widget.mapTo(win, r.topLeft()), r.size()))


def measure(win) -> dict:
    """What the window shows: its size, the enlarged map's widget rect and share of the window's
    area, labels drawn per axis, whether the plot, the colour bar and the map widget are inside."""
    hm = win.heatmap
    for _ in range(3):  # the axes lay their labels out when painted
        win.grab()
        wait(30)
    view = hm.mapFromScene(hm.plot.sceneBoundingRect()).boundingRect()
    bar = hm.mapFromScene(hm.colorbar.sceneBoundingRect()).boundingRect()
    screen = win.screen()
    free = screen.availableGeometry() if screen is not None else None
    frame = win.frameGeometry()
    left, bottom = hm.plot.getAxis("left"), hm.plot.getAxis("bottom")
    scroll = win.centralWidget()
    return {
        "window": [win.width(), win.height()],
        "frame": [frame.x(), frame.y(), frame.width(), frame.height()],
        "free": None if free is None else [free.x(), free.y(), free.width(), free.height()],
        "font_pt": win.font_size,
        "map_pt": hm.font.pointSize(),
        "row_label_pt": left._font().pointSize(),
        "col_label_pt": bottom._font().pointSize(),
        "map": [hm.width(), hm.height()],
        "map_share": round(hm.width() * hm.height() / (win.width() * win.height()), 3),
        "rows": len(hm.row_tokens),
        "cols": len(hm.col_tokens),
        "row_labels": sorted({i for _, _, i in left.drawn}),
        "col_labels": sorted({i for _, _, i in bottom.drawn}),
        "values": len(hm.values.shown()),
        "map_inside": inside(win, hm),
        "plot_inside": inside(win, hm, view) and hm.rect().contains(view),
        "bar_inside": inside(win, hm, bar) and hm.rect().contains(bar),
        "scrolls": any(bar.maximum() > 0 for bar in (scroll.verticalScrollBar(), scroll.horizontalScrollBar())),
        "kept": dict(win.projector.shows),
    }


def screenshot(win):
    """The whole screen, window-manager frame included, on a real X server; else the window."""
    from PySide6 import QtGui

    screen = win.screen()
    if screen is not None and QtGui.QGuiApplication.platformName() == "xcb":
        shot = screen.grabWindow(0)
        if not shot.isNull():
            return shot
    return win.grab()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path, help="folder for projector-1280x720.png and projector-1280x720-ctrl-plus-3.png")
    p.add_argument("--checkpoint", default="ko-en-nc")
    p.add_argument("--text", default=TEXT)
    p.add_argument("--view", default="cross")
    p.add_argument("--layer", type=int, default=4, help="1-based")
    p.add_argument("--head", type=int, default=1, help="1-based")
    p.add_argument("--steps", type=int, default=None, help="show the state after N decoder steps (default: all)")
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from PySide6 import QtGui, QtWidgets

    from core.checkpoints.checkpoint import load_checkpoint
    from core.locations import resolve_checkpoint
    from gui.app import register_fonts
    from gui.state.live_commands import start
    from gui.window.main_window import MainWindow
    from gui.window.screen_fit import fit_to_screen, refit_with_frame

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    win = MainWindow(font_family=register_fonts())
    size = (1600, 950)  # as main.py opens it: shrunk to the screen, frame included
    win.resize(*fit_to_screen(size, app.primaryScreen()))
    win.show()
    wait(800)  # a window manager frames it
    refit_with_frame(win, size)
    ckpt = load_checkpoint(resolve_checkpoint(args.checkpoint), device="cpu")
    win.prepare_ahead = False
    win.use_checkpoint(ckpt)
    win.inputs.text.setText(args.text)
    live, state = start(ckpt, win.current_request())
    if live is not None:
        live.seek(10**9 if args.steps is None else args.steps)
        state = live.state()
    win.show_result(state, args.steps)
    win.set_view(args.view)
    win.select(args.layer - 1, args.head - 1)
    win.projector.set(True)  # (not remembered: a screenshot run leaves the user's settings alone)
    QtGui.QCursor.setPos(app.primaryScreen().geometry().bottomRight())  # the pointer off the map
    args.out.mkdir(parents=True, exist_ok=True)
    for name, presses in (("projector-1280x720.png", 0), ("projector-1280x720-ctrl-plus-3.png", 3)):
        for _ in range(presses):
            win.change_font(+2)  # as Ctrl + does
        wait(500)
        report = measure(win) | {"file": name, "ctrl_plus": presses, "src_tokens": len(win.result.maps.src_tokens)}
        if not screenshot(win).save(str(args.out / name), "PNG", 0):  # 0: the smallest file (lossless)
            raise OSError(f"could not write {args.out / name}")
        print(json.dumps(report))
    win.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
