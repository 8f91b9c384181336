"""File → Open model: the models that ship with the app and the user's own (imported or trained
into the user model folder), listed by name. The list is rebuilt each time the menu opens, so a
model imported while the app runs appears without a restart; the model shown is checked."""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from core.locations import shipped_models, user_models, user_models_dir

EMPTY_HINT = "(none yet: python -m core import-marian SOURCE)"


def install(win, file_menu: QtWidgets.QMenu) -> QtWidgets.QMenu:
    """Add the "Open model" submenu to ``file_menu``; returns it."""
    menu = file_menu.addMenu("Open &model")
    menu.aboutToShow.connect(lambda: fill(win, menu))
    fill(win, menu)
    return menu


def _same(a: str | None, b: Path) -> bool:
    try:
        return a is not None and Path(a).resolve() == b.resolve()
    except OSError:
        return False


def fill(win, menu: QtWidgets.QMenu) -> None:
    """(Re)build ``menu``: a "Shipped" and a "Yours" section, each model an action that loads it
    on the device chosen in the window, then an entry that opens the user model folder."""
    menu.clear()
    for title, list_models in (("Shipped", shipped_models), ("Yours", user_models)):
        menu.addSection(title)
        try:
            entries = list_models()
        except OSError:  # an unreadable folder lists nothing rather than breaking the menu
            entries = []
        if not entries:
            menu.addAction(EMPTY_HINT).setEnabled(False)
        for entry in entries:
            act = menu.addAction(entry.name, lambda p=str(entry.path): _load(win, p))
            act.setCheckable(True)
            act.setChecked(_same(win.checkpoint_path, entry.path))
            act.setToolTip(str(entry.path))
    menu.addSeparator()
    menu.addAction("Show your model folder", _show_folder)
    menu.setToolTipsVisible(True)


def _load(win, path: str) -> None:
    win.load_checkpoint(path, "cpu" if win.inputs.device.currentIndex() == 0 else "cuda")


def _show_folder() -> None:
    folder = user_models_dir()
    folder.mkdir(parents=True, exist_ok=True)
    QtGui.QDesktopServices.openUrl(QtCore.QUrl.fromLocalFile(str(folder)))
