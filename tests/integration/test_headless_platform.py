"""``main.py --screenshot`` on a Linux machine without a display renders offscreen by itself (the
README's screenshot command has no QT_QPA_PLATFORM; Qt aborted with "could not connect to display")."""

from __future__ import annotations

import os
import subprocess
import sys

from PySide6 import QtGui

from gui.app import headless_platform
from tests.support import ROOT


def test_only_a_screenshot_on_linux_without_a_display_is_made_offscreen():
    env: dict[str, str] = {}
    headless_platform("out.png", env, "linux")
    assert env == {"QT_QPA_PLATFORM": "offscreen"}
    for env, platform, shot in (({"DISPLAY": ":0"}, "linux", "o.png"), ({"WAYLAND_DISPLAY": "w"}, "linux", "o.png"),
                                ({"QT_QPA_PLATFORM": "xcb"}, "linux", "o.png"), ({}, "darwin", "o.png"),
                                ({}, "win32", "o.png"), ({}, "linux", None)):
        before = dict(env)
        headless_platform(shot, env, platform)
        assert env == before, (env, platform, shot)


def test_screenshot_without_a_display_or_platform(tmp_path, tiny_checkpoint):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    out = tmp_path / "shot.png"
    run = subprocess.run([sys.executable, str(ROOT / "main.py"), "--checkpoint", str(tiny_checkpoint), "--text",
                          "집에 누군가 있어?", "--size", "900x600", "--screenshot", str(out)],
                         env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == f"saved {out}"
    image = QtGui.QImage(str(out))
    assert (image.width(), image.height()) == (900, 600)
