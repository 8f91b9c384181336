"""Present mode at 1280 x 720 with a long sentence (15 rows, 12 columns): the axis titles
("target query (rows)", "source key (columns)") never touch a token label, in the picture the
screenshot command writes (taken once the axes' layout has settled) and on screen; and the
screenshot command exits 0 (its Present window used to outlive the app at exit: a segfault)."""

from __future__ import annotations

import os
import subprocess
import sys

from PySide6 import QtGui

from gui.export.settle import settled_grab
from gui.window.view_menu import toggle_present
from tests.support import ROOT, shipped
from tests.support.gui import open_window, type_and_translate

LONG = "나는 학생이고 매일 아침 일찍 학교에 갑니다."


def _title_clear_of_labels(axis) -> list[tuple[str, float]]:
    """Each drawn label whose box overlaps the axis title's box: (text, overlap in px)."""
    title = axis.label.mapRectToParent(axis.label.boundingRect())
    hits = []
    for rect, text, _i in axis.drawn:
        inter = title.intersected(rect)
        if not inter.isEmpty():
            hits.append((text, round(min(inter.width(), inter.height()), 1)))
    return hits


def test_present_axis_titles_clear_of_token_labels(qtbot):
    win = open_window(qtbot, shipped(), size=(1280, 720))
    try:
        type_and_translate(qtbot, win, LONG)
        assert len(win.result.steps) >= 12 and len(win.result.maps.src_tokens) >= 12  # crowded both ways
        win.set_view("cross")
        toggle_present(win)
        pw = win.present_window
        pw.showNormal()
        pw.resize(1280, 720)
        image = settled_grab(pw).toImage()
        assert (image.width(), image.height()) == (1280, 720)
        for name in ("left", "bottom"):
            axis = pw.heatmap.plot.getAxis(name)
            assert axis.drawn, name
            assert _title_clear_of_labels(axis) == [], name
        assert settled_grab(pw).toImage() == image  # settled: another paint changes nothing
        # and stays settled on screen: no more layouts (the row and column axes once resized each other forever)
        bottom = pw.heatmap.plot.getAxis("bottom")
        laid_out = []
        original = bottom.generateDrawSpecs
        bottom.generateDrawSpecs = lambda p: laid_out.append(1) or original(p)
        qtbot.wait(400)
        assert laid_out == []
        pw.close()
    finally:
        win.close()


def test_present_screenshot_command_exits_cleanly(tmp_path):
    png = tmp_path / "present.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    args = ["--text", LONG, "--view", "cross", "--present", "--size", "1280x720", "--screenshot", str(png)]
    for _ in range(2):  # the exit crash was intermittent (4 runs in 5)
        r = subprocess.run([sys.executable, "main.py", *args], cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    img = QtGui.QImage(str(png))
    assert (img.width(), img.height()) == (1280, 720)
