"""Where Attention Studio's files are: the models and fonts that ship with it, and the user's own models.

Shipped files live in two importable data packages, ``checkpoints`` (the models) and ``assets`` (fonts,
icon, desktop entry), and are found with :mod:`importlib.resources`. The same code therefore works from
a source checkout, an editable install, an installed wheel and a PyInstaller bundle; nothing is located
relative to the source tree. The user's models (imported or trained) live in a per-user data folder
chosen by ``platformdirs`` (``~/.local/share/attention-studio/models`` on Linux), or in the folder named
by ``$ATTENTION_STUDIO_MODELS`` (tests, shared lab machines).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

APP_NAME = "attention-studio"
DEFAULT_MODEL = "ko-en-nc"
MODELS_ENV = "ATTENTION_STUDIO_MODELS"


@dataclass(frozen=True)
class ModelEntry:
    """A model folder known by name: ``shipped`` with the app, or one of the user's."""

    name: str
    path: Path
    shipped: bool


def _folder(package) -> Path:
    """The folder of an imported data package. A zipped install has no real folder, and the
    loaders need real files (safetensors maps its file), so that is refused with a clear error."""
    root = resources.files(package)
    if not isinstance(root, Path):
        raise FileNotFoundError(
            f"{package.__name__}: installed as {type(root).__name__}, not as a folder; "
            "install Attention Studio unzipped (pip does)"
        )
    return root


def shipped_models_dir() -> Path:
    """The folder holding the models that ship with the app (one subfolder each)."""
    import checkpoints  # imported by name so that PyInstaller sees and bundles the package

    return _folder(checkpoints)


def assets_dir() -> Path:
    """The folder holding the fonts (``fonts/``), the icon (``icons/``) and the desktop entry."""
    import assets

    return _folder(assets)


def font_files() -> list[Path]:
    """The bundled TrueType fonts (NanumGothic, OFL), sorted by name."""
    return sorted((assets_dir() / "fonts").glob("*.ttf"))


def default_checkpoint() -> Path:
    """The shipped default model's folder."""
    return shipped_models_dir() / DEFAULT_MODEL


def user_models_dir() -> Path:
    """The folder for the user's own models (not created here): ``$ATTENTION_STUDIO_MODELS`` if set,
    else ``models/`` in platformdirs' user data folder for this app."""
    env = os.environ.get(MODELS_ENV)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return platformdirs.user_data_path(APP_NAME, appauthor=False) / "models"


def _models_in(folder: Path, shipped: bool) -> list[ModelEntry]:
    """Subfolders of ``folder`` that hold a ``config.json``; hidden and ``__pycache__``-like names
    (temporary folders of an unfinished save start with a dot) are skipped."""
    if not folder.is_dir():
        return []
    return [
        ModelEntry(p.name, p, shipped)
        for p in sorted(folder.iterdir())
        if not p.name.startswith((".", "_")) and (p / "config.json").is_file()
    ]


def shipped_models() -> list[ModelEntry]:
    return _models_in(shipped_models_dir(), shipped=True)


def user_models() -> list[ModelEntry]:
    return _models_in(user_models_dir(), shipped=False)


def resolve_checkpoint(spec: str | Path) -> str:
    """A ``--checkpoint`` value as a folder path. An existing folder is taken as it is; otherwise a
    shipped model's name, then a user model's name, gives that model's folder. Anything else is
    returned unchanged, so the loader reports it ("…: no such directory")."""
    text = str(spec)
    if Path(text).expanduser().exists() or not text or os.sep in text or "/" in text:
        return text
    for entry in shipped_models() + user_models():
        if entry.name == text:
            return str(entry.path)
    return text
