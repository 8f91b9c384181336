"""The Debian packages Qt needs on Linux, kept in this one list, and a start-up check of them.

Qt's xcb platform plugin aborts the whole process (SIGABRT, exit 134) when one of its shared
libraries is missing, e.g. libxcb-cursor0 since Qt 6.5. ``main.py`` calls
:func:`missing_message` before it creates the QApplication: when the window would use xcb and a
library cannot be loaded, it prints one line naming the packages and the apt-get command, and
exits with status 2. Offscreen runs (tests, ``--screenshot`` without a display) are not checked.

``python3 gui/system_deps.py`` prints the packages, space-separated, for
``sudo apt-get install $(python3 gui/system_deps.py)``; ``.ci/run`` installs that list.
``python3 gui/system_deps.py --install`` (the README's first Quick start line) installs only what is
missing: the packages whose library cannot be loaded and ``python3-venv`` where ``python3 -m venv``
would fail, with ``apt-get`` (through ``sudo`` unless run as root). Qt-free and standard library
only, so a system ``python3`` runs it before any venv exists.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import shutil
import subprocess
import sys

# Debian package -> the shared library (soname) Qt loads from it. Most are needed even offscreen
# (EGL/GL, fontconfig, xkbcommon, dbus); the libxcb-* ones by the xcb platform plugin.
QT_DEBS = {
    "libegl1": "libEGL.so.1",
    "libgl1": "libGL.so.1",
    "libglx0": "libGLX.so.0",
    "libopengl0": "libOpenGL.so.0",
    "libxkbcommon0": "libxkbcommon.so.0",
    "libxkbcommon-x11-0": "libxkbcommon-x11.so.0",
    "libfontconfig1": "libfontconfig.so.1",
    "libfreetype6": "libfreetype.so.6",
    "libdbus-1-3": "libdbus-1.so.3",
    "libx11-6": "libX11.so.6",
    "libx11-xcb1": "libX11-xcb.so.1",
    "libxcb1": "libxcb.so.1",
    "libxcb-cursor0": "libxcb-cursor.so.0",
    "libxcb-icccm4": "libxcb-icccm.so.4",
    "libxcb-image0": "libxcb-image.so.0",
    "libxcb-keysyms1": "libxcb-keysyms.so.1",
    "libxcb-randr0": "libxcb-randr.so.0",
    "libxcb-render-util0": "libxcb-render-util.so.0",
    "libxcb-shape0": "libxcb-shape.so.0",
    "libxcb-xfixes0": "libxcb-xfixes.so.0",
    "libxcb-xkb1": "libxcb-xkb.so.1",
    "libxcb-sync1": "libxcb-sync.so.1",
    "libxcb-shm0": "libxcb-shm.so.0",
    "libxcb-util1": "libxcb-util.so.1",
    "libpng16-16": "libpng16.so.16",
    "zlib1g": "libz.so.1",
}
# glib's package was renamed in Debian 13 (64-bit time_t): the first name apt knows is used.
GLIB_DEBS = ("libglib2.0-0t64", "libglib2.0-0")
GLIB_SONAME = "libglib-2.0.so.0"
# Debian and Ubuntu move ensurepip out of python3 into this package: without it `python3 -m venv` fails.
VENV_DEB = "python3-venv"


def glib_package() -> str:
    """glib's package name on this release: ``libglib2.0-0t64`` where apt knows it, else ``libglib2.0-0``.
    Asks ``apt-cache`` (about 0.1 s), so it is only called to print the list or a missing glib."""
    apt_cache = shutil.which("apt-cache")
    for name in GLIB_DEBS[:-1]:
        if (
            apt_cache
            and subprocess.run([apt_cache, "show", name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
        ):
            return name
    return GLIB_DEBS[-1]


def packages() -> list[str]:
    """Every package Qt needs, glib's under this release's name: what ``.ci/run`` installs."""
    return [*QT_DEBS, glib_package()]


def uses_xcb(env=os.environ, platform: str = sys.platform) -> bool:
    """Whether Qt will open its window through xcb: on Linux, ``QT_QPA_PLATFORM`` names xcb first
    (``xcb``, ``xcb:args``, ``xcb;wayland``), or none is chosen, ``DISPLAY`` is set and
    ``WAYLAND_DISPLAY`` is not."""
    if not platform.startswith("linux"):
        return False
    chosen = env.get("QT_QPA_PLATFORM", "").strip()
    if chosen:
        return chosen.split(";")[0].split(":")[0].strip() == "xcb"
    return bool(env.get("DISPLAY")) and not env.get("WAYLAND_DISPLAY")


def _loadable(soname: str) -> bool:
    """Whether the dynamic loader finds ``soname`` (the same search Qt's own load does)."""
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def missing_message(env=os.environ, platform: str = sys.platform, loadable=None) -> str | None:
    """One line naming every package whose library cannot be loaded and the ``sudo apt-get install``
    command, or None when the window will not use xcb or everything loads. ``loadable(soname)``
    defaults to a dlopen of the soname (a few ms for the whole list)."""
    if not uses_xcb(env, platform):
        return None
    missing = missing_packages(loadable, has_ensurepip=True)
    if not missing:
        return None
    return (
        f"error: Qt's window (xcb) needs system libraries that are missing; Debian/Ubuntu packages: "
        f"{', '.join(missing)} (or run headless with QT_QPA_PLATFORM=offscreen); install them with: "
        f"sudo apt-get install {' '.join(missing)}"
    )


def missing_packages(loadable=None, has_ensurepip: bool | None = None) -> list[str]:
    """The packages :func:`install` would install: each of :func:`packages` whose library cannot be
    loaded, in list order, then ``python3-venv`` when this Python has no ``ensurepip``."""
    loadable = loadable or _loadable
    missing = [deb for deb, soname in QT_DEBS.items() if not loadable(soname)]
    if not loadable(GLIB_SONAME):
        missing.append(glib_package())
    if has_ensurepip is None:
        has_ensurepip = importlib.util.find_spec("ensurepip") is not None
    return missing if has_ensurepip else [*missing, VENV_DEB]


def apt_command(missing: list[str], is_root: bool, has_sudo: bool) -> list[str] | None:
    """``[sudo] apt-get install -y --no-install-recommends PKG…``; None when neither root nor sudo."""
    if not is_root and not has_sudo:
        return None
    return [*([] if is_root else ["sudo"]), "apt-get", "install", "-y", "--no-install-recommends", *missing]


def install(run=subprocess.run) -> int:
    """Install what :func:`missing_packages` names with apt-get (after ``apt-get update`` if the first
    try fails), then check again in a new process (the loader's cache is read once per process).
    Returns 0 when nothing is missing afterwards; 1 with a message on stderr otherwise (no apt-get,
    neither root nor sudo, apt-get failed, or a library still not loadable)."""
    missing = missing_packages()
    if not missing:
        print("system packages: all present (Qt's libraries and python3-venv)")
        return 0
    if not sys.platform.startswith("linux") or not shutil.which("apt-get"):
        print(f"error: no apt-get here; install your system's packages for: {', '.join(missing)}", file=sys.stderr)
        return 1
    cmd = apt_command(missing, os.geteuid() == 0, bool(shutil.which("sudo")))
    if cmd is None:
        print(f"error: run as root (no sudo here): apt-get install {' '.join(missing)}", file=sys.stderr)
        return 1
    print("+", " ".join(cmd), flush=True)
    if run(cmd).returncode != 0:
        update = [*cmd[: cmd.index("apt-get")], "apt-get", "update"]
        print("+", " ".join(update), flush=True)
        if run(update).returncode != 0 or run(cmd).returncode != 0:
            print("error: apt-get failed; the packages are: " + " ".join(missing), file=sys.stderr)
            return 1
    importlib.invalidate_caches()  # python3-venv may have brought ensurepip; dlopen caches no failure
    left = missing_packages()
    if left:
        print(f"error: still missing after apt-get: {' '.join(left)}", file=sys.stderr)
        return 1
    print(f"system packages: installed {len(missing)} ({' '.join(missing)})")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--install"]:
        sys.exit(install())
    if sys.argv[1:] == ["--missing"]:
        print(" ".join(missing_packages()))
        sys.exit(0)
    if sys.argv[1:]:
        sys.exit("usage: python3 gui/system_deps.py [--install | --missing]")
    print(" ".join(packages()))
