"""A Linux desktop without a library Qt's xcb plugin needs gets one line naming the Debian packages
and the apt-get command, and exit status 2, instead of Qt's own abort (SIGABRT, exit 134). Offscreen
runs and machines with every library are untouched. ``main.py --screenshot`` on a Linux machine
without a display renders offscreen by itself (the README's screenshot command has no
QT_QPA_PLATFORM; Qt aborted with "could not connect to display")."""

from __future__ import annotations

import os
import subprocess
import sys

from PySide6 import QtGui

from gui import system_deps
from gui.app import headless_platform
from tests.support import ROOT

# Starts the app with ctypes unable to load libxcb-cursor.so.0, as on a desktop without libxcb-cursor0;
# every other library counts as found, whatever this machine has.
HIDE_CURSOR_LIB = """
import ctypes, sys
real = ctypes.CDLL
def fake(name, *a, **k):
    if name == "libxcb-cursor.so.0":
        raise OSError(name + ": cannot open shared object file")
    try:
        return real(name, *a, **k)
    except OSError:
        return None
ctypes.CDLL = fake
sys.argv = ["main.py"]
from gui.app import main
sys.exit(main([]))
"""


def test_missing_xcb_library_prints_one_line_with_the_package_and_exits_2():
    env = {k: v for k, v in os.environ.items() if k != "WAYLAND_DISPLAY"}
    env.update(QT_QPA_PLATFORM="xcb", DISPLAY=":99")
    run = subprocess.run([sys.executable, "-c", HIDE_CURSOR_LIB], env=env, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert run.returncode == 2, (run.returncode, run.stderr[-2000:])
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert "libxcb-cursor0" in lines[0]
    assert lines[0].endswith("sudo apt-get install libxcb-cursor0"), lines[0]


def test_only_an_xcb_run_on_linux_is_checked():
    def loadable(soname):
        return soname != "libxcb-cursor.so.0"

    def found(soname):
        return True

    missing = system_deps.missing_message
    assert "libxcb-cursor0" in missing({"QT_QPA_PLATFORM": "xcb"}, "linux", loadable)
    assert "libxcb-cursor0" in missing({"DISPLAY": ":0"}, "linux", loadable)
    assert "libxcb-cursor0" in missing({"QT_QPA_PLATFORM": "xcb:nograb;wayland", "WAYLAND_DISPLAY": "w"}, "linux", loadable)
    assert missing({"DISPLAY": ":0", "QT_QPA_PLATFORM": "xcb"}, "linux", found) is None
    for env, platform in (
        ({"QT_QPA_PLATFORM": "offscreen", "DISPLAY": ":0"}, "linux"),
        ({"QT_QPA_PLATFORM": "minimal", "DISPLAY": ":0"}, "linux"),
        ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}, "linux"),
        ({}, "linux"),
        ({"DISPLAY": ":0"}, "darwin"),
        ({"QT_QPA_PLATFORM": "xcb"}, "win32"),
    ):
        assert missing(env, platform, loadable) is None, (env, platform)


def test_message_names_every_missing_package_once_in_list_order():
    gone = {"libxcb-keysyms.so.1", "libxcb-cursor.so.0", "libxcb-icccm.so.4"}
    line = system_deps.missing_message({"QT_QPA_PLATFORM": "xcb"}, "linux", lambda soname: soname not in gone)
    assert "\n" not in line
    assert line.endswith("sudo apt-get install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1"), line


def test_no_message_when_every_library_is_found(monkeypatch):
    monkeypatch.setattr(system_deps, "_loadable", lambda soname: True)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("QT_QPA_PLATFORM", "xcb")
    monkeypatch.setenv("DISPLAY", ":99")
    assert system_deps.missing_message() is None


def test_offscreen_app_runs_even_with_every_library_missing(qtbot, monkeypatch, capsys, tmp_path, tiny_checkpoint):
    from gui import app

    monkeypatch.setattr(system_deps, "_loadable", lambda soname: False)
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    monkeypatch.setenv("DISPLAY", ":99")
    out = tmp_path / "shot.png"
    assert app.main(["--checkpoint", str(tiny_checkpoint), "--size", "400x300", "--screenshot", str(out)]) == 0
    assert capsys.readouterr() == (f"saved {out}\n", "")


def test_ci_and_readme_use_the_one_list():
    listing = subprocess.run(
        [sys.executable, str(ROOT / "gui" / "system_deps.py")], capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()
    assert listing[:-1] == list(system_deps.QT_DEBS) and listing[-1] in system_deps.GLIB_DEBS
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "gui/system_deps.py" in ci and "libxcb-cursor0" not in ci
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "python3 gui/system_deps.py --install" in readme and "libxcb-cursor0" not in readme


def test_only_a_screenshot_on_linux_without_a_display_is_made_offscreen():
    env: dict[str, str] = {}
    headless_platform("out.png", env, "linux")
    assert env == {"QT_QPA_PLATFORM": "offscreen"}
    for env, platform, shot in (
        ({"DISPLAY": ":0"}, "linux", "o.png"),
        ({"WAYLAND_DISPLAY": "w"}, "linux", "o.png"),
        ({"QT_QPA_PLATFORM": "xcb"}, "linux", "o.png"),
        ({}, "darwin", "o.png"),
        ({}, "win32", "o.png"),
        ({}, "linux", None),
    ):
        before = dict(env)
        headless_platform(shot, env, platform)
        assert env == before, (env, platform, shot)


def test_screenshot_without_a_display_or_platform(tmp_path, tiny_checkpoint):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    out = tmp_path / "shot.png"
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "main.py"),
            "--checkpoint",
            str(tiny_checkpoint),
            "--text",
            "집에 누군가 있어?",
            "--size",
            "900x600",
            "--screenshot",
            str(out),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == f"saved {out}"
    image = QtGui.QImage(str(out))
    assert (image.width(), image.height()) == (900, 600)


def test_install_names_only_what_is_missing_and_venv_where_ensurepip_is_gone():
    gone = {"libxcb-cursor.so.0", "libglib-2.0.so.0"}
    missing = system_deps.missing_packages(lambda soname: soname not in gone, has_ensurepip=False)
    assert missing == ["libxcb-cursor0", system_deps.glib_package(), "python3-venv"]
    assert system_deps.missing_packages(lambda soname: True, has_ensurepip=True) == []
    assert system_deps.apt_command(["a", "b"], is_root=True, has_sudo=False) == [
        "apt-get",
        "install",
        "-y",
        "--no-install-recommends",
        "a",
        "b",
    ]
    assert system_deps.apt_command(["a"], is_root=False, has_sudo=True)[:3] == ["sudo", "apt-get", "install"]
    assert system_deps.apt_command(["a"], is_root=False, has_sudo=False) is None


def test_install_runs_apt_get_once_for_the_missing_and_updates_only_when_that_fails(monkeypatch, capsys):
    installed = []  # the packages are missing until an apt-get install succeeds; the check afterwards sees that
    monkeypatch.setattr(system_deps, "missing_packages", lambda: [] if installed else ["libxcb-cursor0", "python3-venv"])
    monkeypatch.setattr(system_deps.sys, "platform", "linux")
    monkeypatch.setattr(system_deps.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(system_deps.os, "geteuid", lambda: 1000)
    calls, codes = [], iter([100, 0, 0])  # install fails (stale lists), update, install again

    def run(cmd):
        calls.append(cmd)
        code = next(codes)
        if code == 0 and "install" in cmd:
            installed.append(cmd)
        return subprocess.CompletedProcess(cmd, code)

    assert system_deps.install(run) == 0
    install = ["sudo", "apt-get", "install", "-y", "--no-install-recommends", "libxcb-cursor0", "python3-venv"]
    assert calls == [install, ["sudo", "apt-get", "update"], install]
    assert capsys.readouterr().out.splitlines()[-1] == "system packages: installed 2 (libxcb-cursor0 python3-venv)"
    monkeypatch.setattr(system_deps, "missing_packages", lambda: [])
    calls.clear()
    assert system_deps.install(run) == 0 and calls == []
