"""Windows that fit, on a real X server (Xvfb at 1280 x 720), with a window manager (openbox) and
without one (a kiosk or bare X): the main window with its frame inside the screen's available area
(the status bar visible), Present mode covering the whole screen. Skipped where Xvfb or openbox is
not installed (.ci/run installs both)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.support import ROOT

needs_x = pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="xvfb-run is not installed")


def probe(window_manager: bool) -> dict:
    inner = f"{sys.executable} -m tests.support.x11_window_probe 1600 950"
    if window_manager:
        inner = f"openbox & sleep 1; {inner}; kill %1"
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"} | {"QT_QPA_PLATFORM": "xcb", "PYTHONPATH": str(ROOT)}
    res = subprocess.run(
        ["xvfb-run", "-a", "-s", "-screen 0 1280x720x24", "bash", "-c", inner],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr[-1500:]
    return json.loads([x for x in res.stdout.splitlines() if x.startswith("{")][-1])


@needs_x
@pytest.mark.skipif(shutil.which("openbox") is None, reason="openbox is not installed")
def test_with_a_window_manager_the_framed_window_fits_and_present_fills_the_screen():
    g = probe(window_manager=True)
    fx, fy, fw, fh = g["frame"]
    ax, ay, aw, ah = g["free"]
    assert fw <= aw and fh <= ah and fy + fh <= ay + ah and fx + fw <= ax + aw, g  # status bar on screen
    assert g["present"][2:] == g["screen"], g


@needs_x
def test_without_a_window_manager_present_fills_the_screen():
    g = probe(window_manager=False)
    assert g["present"][2:] == g["screen"] == [1280, 720], g  # not 685 x 480
    assert g["frame"][3] <= 720
