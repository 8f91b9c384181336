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


@needs_x
@pytest.mark.skipif(shutil.which("openbox") is None, reason="openbox is not installed")
def test_with_a_window_manager_the_projector_layout_labels_every_token_and_keeps_the_map_inside(tmp_path, tiny_checkpoint):
    """docs/layout/projector_screenshots.py (the docs' screenshots) on the tiny model, 14 source tokens,
    at the default font and after Ctrl + three times."""
    script = (
        f"{sys.executable} docs/layout/projector_screenshots.py {tmp_path} --checkpoint {tiny_checkpoint}"
        " --text '비가 와서 우리는 집에 있었어요.' --layer 1 --head 1 --steps 14"
    )
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"} | {"QT_QPA_PLATFORM": "xcb", "PYTHONPATH": str(ROOT)}
    res = subprocess.run(
        ["xvfb-run", "-a", "-s", "-screen 0 1280x720x24", "bash", "-c", f"openbox & sleep 1; {script}; kill %1"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert res.returncode == 0, res.stderr[-1500:]
    shots = [json.loads(x) for x in res.stdout.splitlines() if x.startswith("{")]
    assert [s["ctrl_plus"] for s in shots] == [0, 3]
    for s in shots:
        fx, fy, fw, fh = s["frame"]
        ax, ay, aw, ah = s["free"]
        assert fx >= ax and fy >= ay and fx + fw <= ax + aw and fy + fh <= ay + ah, s  # framed, inside the screen
        assert s["src_tokens"] == s["cols"] == 14, s
        assert s["row_labels"] == list(range(s["rows"])) and s["col_labels"] == list(range(14)), s  # none dropped
        assert s["map_share"] >= 0.6 and s["map_inside"] and s["plot_inside"] and s["bar_inside"] and not s["scrolls"], s
        assert (tmp_path / s["file"]).stat().st_size > 10_000
    assert shots[1]["font_pt"] == shots[0]["font_pt"] + 6 and shots[1]["window"] == shots[0]["window"]  # never grows
    # the map's text at least as large as before Ctrl +, its row labels larger than the window's first font
    assert shots[1]["map_pt"] >= shots[0]["map_pt"] and min(s["row_label_pt"] for s in shots) > shots[0]["font_pt"]
