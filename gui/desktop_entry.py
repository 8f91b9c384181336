"""Linux desktop integration: ``attention-studio --install-desktop`` puts a launcher (``.desktop``
file) and the application icon into the user's data folder (``$XDG_DATA_HOME``, else
``~/.local/share``), so Attention Studio appears in the desktop's application menu.

The launcher starts this very installation (the standalone executable, the ``attention-studio``
script beside the running Python, or ``python -m gui.app``), so it works whether that is on
``PATH`` or not. Qt-free: it runs before any window exists.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from core.locations import APP_NAME, assets_dir

DESKTOP_FILE = f"{APP_NAME}.desktop"


def icon_file() -> Path:
    """The 256 px PNG application icon (also the window icon)."""
    return assets_dir() / "icons" / f"{APP_NAME}.png"


def launch_command() -> list[str]:
    """The command that starts this installation of the app."""
    if getattr(sys, "frozen", False):  # PyInstaller: the executable itself
        return [sys.executable]
    script = Path(sys.executable).parent / APP_NAME
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "gui.app"]


def _exec_quote(arg: str) -> str:
    """One argument of a desktop entry's ``Exec`` key, quoted as the Desktop Entry spec asks."""
    if arg and not any(c in arg for c in " \t\n\"'\\><~|&;$*?#()`%"):
        return arg
    escaped = "".join("\\" + c if c in '"`$\\' else c for c in arg).replace("%", "%%")
    return f'"{escaped}"'


def desktop_entry_text(command: list[str]) -> str:
    """The shipped ``attention-studio.desktop`` with ``Exec`` set to ``command``."""
    lines = (assets_dir() / DESKTOP_FILE).read_text(encoding="utf-8").splitlines()
    exec_line = "Exec=" + " ".join(_exec_quote(a) for a in command)
    return "\n".join(exec_line if line.startswith("Exec=") else line for line in lines) + "\n"


def data_home() -> Path:
    """``$XDG_DATA_HOME`` or ``~/.local/share`` (platformdirs' user data folder, no app name)."""
    import platformdirs

    return platformdirs.user_data_path()


def install(home: Path | None = None) -> list[Path]:
    """Write the launcher and the icons under ``home`` (default :func:`data_home`); returns the
    files written. Running it again overwrites them (e.g. after moving the installation)."""
    home = home or data_home()
    targets = {
        home / "applications" / DESKTOP_FILE: None,
        home / "icons" / "hicolor" / "256x256" / "apps" / f"{APP_NAME}.png": icon_file(),
        home / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_NAME}.svg": assets_dir() / "icons" / f"{APP_NAME}.svg",
    }
    for dest, source in targets.items():
        dest.parent.mkdir(parents=True, exist_ok=True)
        if source is None:
            dest.write_text(desktop_entry_text(launch_command()), encoding="utf-8")
        else:
            shutil.copyfile(source, dest)
    return list(targets)
