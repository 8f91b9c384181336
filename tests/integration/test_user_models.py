"""The user's model folder: ``import-marian`` without ``--out`` writes there, ``--checkpoint NAME``
finds shipped and user models by name, File → Open model lists both; the desktop entry and icon."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from core import locations
from core.__main__ import main as cli
from tests.support import SHIPPED
from tests.support.marian import build_marian, require_import_extra


@pytest.fixture
def user_dir(tmp_path, monkeypatch):
    folder = tmp_path / "my-models"
    monkeypatch.setenv(locations.MODELS_ENV, str(folder))
    return folder


def test_user_folder_follows_platformdirs_unless_overridden(tmp_path, monkeypatch):
    monkeypatch.delenv(locations.MODELS_ENV, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert locations.user_models_dir() == tmp_path / "xdg" / "attention-studio" / "models"
    monkeypatch.setenv(locations.MODELS_ENV, str(tmp_path / "elsewhere"))
    assert locations.user_models_dir() == tmp_path / "elsewhere"


def test_names_resolve_to_shipped_then_user_models(user_dir, tmp_path, monkeypatch):
    mine = user_dir / "mine"
    mine.mkdir(parents=True)
    (mine / "config.json").write_text("{}", encoding="utf-8")
    (user_dir / ".mine.partial-1").mkdir()  # an unfinished save: never listed
    assert [m.name for m in locations.user_models()] == ["mine"]
    assert locations.DEFAULT_MODEL in [m.name for m in locations.shipped_models()]
    assert locations.resolve_checkpoint("mine") == str(mine)
    assert locations.resolve_checkpoint(locations.DEFAULT_MODEL) == str(SHIPPED)
    assert locations.resolve_checkpoint("no-such-model") == "no-such-model"  # the loader names it
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine").mkdir()  # an existing folder wins over a name
    assert locations.resolve_checkpoint("mine") == "mine"
    assert locations.resolve_checkpoint(str(mine)) == str(mine)


def test_import_marian_without_out_writes_to_the_user_folder(user_dir, tmp_path, capsys):
    require_import_extra()
    source = tmp_path / "opus-mt-tiny"
    build_marian(source, "swish")
    assert cli(["import-marian", str(source)]) == 0
    out = user_dir / "opus-mt-tiny"
    assert (out / "config.json").is_file() and (out / "model.safetensors").is_file()
    assert "--checkpoint opus-mt-tiny" in capsys.readouterr().out
    assert cli(["translate", "나는 학생입니다.", "--checkpoint", "opus-mt-tiny", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["translation"] is not None
    assert cli(["import-marian", str(source)]) == 2  # never over an existing model
    assert "already exists" in capsys.readouterr().err


def test_models_menu_lists_shipped_and_user_models(qtbot, user_dir, monkeypatch):
    from gui.window import models_menu
    from gui.window.main_window import MainWindow

    (user_dir / "mine").mkdir(parents=True)
    (user_dir / "mine" / "config.json").write_text("{}", encoding="utf-8")
    win = MainWindow()
    qtbot.addWidget(win)
    loads = []
    monkeypatch.setattr(win, "load_checkpoint", lambda path, device="auto": loads.append((path, device)))
    file_menu = win.menuBar().actions()[0].menu()
    menu = next(a.menu() for a in file_menu.actions() if a.menu() and "model" in a.text().lower())
    win.checkpoint_path = str(SHIPPED)
    models_menu.fill(win, menu)
    acts = {a.text(): a for a in menu.actions() if a.text()}
    assert {"Shipped", "Yours", locations.DEFAULT_MODEL, "mine", "Show your model folder"} <= set(acts)
    assert acts[locations.DEFAULT_MODEL].isChecked() and not acts["mine"].isChecked()
    acts["mine"].trigger()
    assert loads == [(str(user_dir / "mine"), "cpu")]


def test_models_menu_says_when_the_user_has_none(qtbot, user_dir):
    from PySide6 import QtWidgets

    from gui.window import models_menu

    class Win:  # the two attributes the menu reads
        checkpoint_path = None

    menu = QtWidgets.QMenu()
    models_menu.fill(Win(), menu)
    hint = [a for a in menu.actions() if a.text() == models_menu.EMPTY_HINT]
    assert len(hint) == 1 and not hint[0].isEnabled()


def test_desktop_entry_and_icon(tmp_path, qtbot):
    from PySide6 import QtWidgets

    from gui import desktop_entry
    from gui.app import set_app_icon

    written = desktop_entry.install(tmp_path)
    assert all(p.is_file() for p in written) and len(written) == 3
    text = (tmp_path / "applications" / "attention-studio.desktop").read_text(encoding="utf-8")
    assert "Icon=attention-studio" in text and "Type=Application" in text
    exec_line = next(line for line in text.splitlines() if line.startswith("Exec="))
    assert desktop_entry.launch_command()[0] in exec_line.replace('"', "")
    assert desktop_entry._exec_quote("/a b/c") == '"/a b/c"' and desktop_entry._exec_quote("/ab") == "/ab"
    if shutil.which("desktop-file-validate"):  # desktop-file-utils: the freedesktop.org checker
        check = subprocess.run(["desktop-file-validate", str(written[0])], capture_output=True, text=True)
        assert check.returncode == 0 and not check.stdout.strip(), check.stdout
    icon = set_app_icon(QtWidgets.QApplication.instance())
    assert not icon.isNull() and not QtWidgets.QApplication.windowIcon().isNull()
