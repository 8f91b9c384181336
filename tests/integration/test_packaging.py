"""Installed like real software: data files (the default model, the fonts, the icon) are found through
the installed packages, never through paths relative to the source tree, and the wheel's
package-data carries them. (.ci/run builds the wheel and runs it from an empty folder.)"""

from __future__ import annotations

import ast
import fnmatch
import os
import shutil
import subprocess
import sys

import pytest
import setuptools

from core.locations import DEFAULT_MODEL
from tests.support import ROOT


def _pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


INSTALLED = ("core", "gui", "checkpoints", "assets")  # the packages a wheel installs
# Modules allowed to use __file__ (none); the test below fails if an entry is no longer needed.
KNOWN: dict[str, str] = {}


def _file_uses() -> dict[str, int]:
    """Modules of the installed packages and bench/ that use ``__file__`` (path → first line)."""
    found = {}
    for package in (*INSTALLED, "bench"):
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            lines = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "__file__"]
            if lines:
                found[path.relative_to(ROOT).as_posix()] = min(lines)
    return found


def test_no_module_finds_files_relative_to_its_source_file():
    """``__file__`` is how a module reaches the source tree (``Path(__file__).parent.parent / ...``):
    installed, that lands in site-packages where no repository is. Data comes from core.locations."""
    offending = {p: line for p, line in _file_uses().items() if p not in KNOWN}
    assert offending == {}, f"use core.locations (importlib.resources), not __file__: {offending}"


def test_known_exceptions_are_still_needed():
    uses = _file_uses()
    assert set(KNOWN) <= set(uses), f"no longer uses __file__, drop it from KNOWN: {set(KNOWN) - set(uses)}"


def test_wheel_package_data_carries_the_default_model_and_assets():
    cfg = _pyproject()["tool"]["setuptools"]
    found = setuptools.find_packages(ROOT, **{k: v for k, v in cfg["packages"]["find"].items() if k != "namespaces"})
    assert set(INSTALLED) <= set(found) and not any(p.split(".")[0] in ("bench", "tests") for p in found)
    subpackages = {
        str(init.parent.relative_to(ROOT)).replace("/", ".")
        for top in ("core", "gui")
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert subpackages <= set(found), f"not in the wheel: {sorted(subpackages - set(found))}"
    data = cfg["package-data"]

    def shipped(package: str) -> set[str]:
        base = ROOT / package
        files = {p.relative_to(base).as_posix() for p in base.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
        return {f for f in files if any(fnmatch.fnmatch(f, g) for g in data[package])}

    model = {f.split("/", 1)[1] for f in shipped("checkpoints")}
    assert model == {p.name for p in (ROOT / "checkpoints" / DEFAULT_MODEL).iterdir()}
    assert {f.split("/", 1)[0] for f in shipped("checkpoints")} == {DEFAULT_MODEL}  # ko-en-base stays out
    assert {
        "fonts/NanumGothic.ttf",
        "fonts/OFL.txt",
        "icons/attention-studio.png",
        "icons/attention-studio.svg",
        "attention-studio.desktop",
    } <= shipped("assets")


RELOCATED = """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]  # no editable finder
sys.path[:0] = [SITE]
from core import locations
from core.defaults import DEFAULT_CHECKPOINT
paths = [locations.default_checkpoint(), DEFAULT_CHECKPOINT, *locations.font_files(),
         locations.resolve_checkpoint("ko-en-nc")]
bad = [str(p) for p in paths if not str(p).startswith(SITE)]
assert not bad and locations.font_files(), bad
assert (DEFAULT_CHECKPOINT / "config.json").is_file()
print("ok", DEFAULT_CHECKPOINT)
"""


def test_data_is_found_wherever_the_packages_are_installed(tmp_path):
    """The installed packages copied to another folder (the repository off sys.path, no editable
    finder): the default model and the fonts are found there."""
    site = tmp_path / "site"
    for package in ("core", "gui", "assets"):
        shutil.copytree(ROOT / package, site / package, ignore=shutil.ignore_patterns("__pycache__"))
    (site / "checkpoints").mkdir()
    shutil.copy(ROOT / "checkpoints" / "__init__.py", site / "checkpoints")
    try:
        os.symlink(ROOT / "checkpoints" / DEFAULT_MODEL, site / "checkpoints" / DEFAULT_MODEL)
    except OSError:
        pytest.skip("no symlinks here")
    run = subprocess.run(
        [sys.executable, "-c", RELOCATED.replace("SITE", repr(str(site)))],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": ""},
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.startswith("ok ")


@pytest.mark.parametrize("module, word", [("core.__main__", "import-marian"), ("gui.app", "--install-desktop")])
def test_version_and_help(module, word, capsys):
    from importlib import import_module

    from core import __version__

    main = import_module(module).main
    with pytest.raises(SystemExit) as ex:
        main(["--version"])
    assert ex.value.code == 0 and capsys.readouterr().out.strip() == f"attention-studio {__version__}"
    with pytest.raises(SystemExit) as ex:
        main(["--help"])
    assert ex.value.code == 0 and word in capsys.readouterr().out


def test_version_comes_from_one_place():
    from core import __version__

    cfg = _pyproject()
    assert "version" in cfg["project"]["dynamic"]
    assert cfg["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "core.__version__"}
    assert __version__.count(".") == 2
