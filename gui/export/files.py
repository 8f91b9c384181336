"""Export the enlarged map or the grid (PNG here, SVG in gui/export/svg.py, the grid with its
header in gui/export/grid_image.py; one file each, named by the user) and the displayed tensors (.npz)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph.exporters as pgx

from core.decoding.translate import Translation
from gui.state import view_kinds
from gui.state.derived import derived_arrays
from gui.state.view_data import masks_at
from gui.state.view_kinds import view_at

WHAT = {"map": "the enlarged map", "grid": "the layer × head grid"}
_last_dir: list[Path] = []  # the folder of the last export, where the next dialog opens


def start_dir() -> Path:
    """Where an export dialog opens: the last export's folder, else the user's Pictures folder,
    else the home folder, else the working directory."""
    if _last_dir and _last_dir[-1].is_dir():
        return _last_dir[-1]
    from PySide6 import QtCore

    pictures = QtCore.QStandardPaths.writableLocation(QtCore.QStandardPaths.StandardLocation.PicturesLocation)
    for folder in (Path(pictures) if pictures else None, Path.home(), Path.cwd()):
        if folder is not None and folder.is_dir():
            return folder
    return Path.cwd()


def remember(path: Path) -> None:
    _last_dir[:] = [Path(path).resolve().parent]


def export_png(path: str | Path, widget, scale: int = 2) -> tuple[Path, tuple[int, int]]:
    """Write ONE pyqtgraph widget (the enlarged map or the grid) to ``path`` as PNG at ``scale``
    times its on-screen size; nothing else is written. Returns the path and the pixel size.
    Raises OSError when the file cannot be written. SVG: :func:`gui.export.svg.export_svg`.
    Both draw the widget as laid out; File → Export of the enlarged map goes through
    :func:`gui.export.map_image.export_map`, which lays it out with room for every token label,
    and of the grid through :func:`gui.export.grid_image.export_grid`, which adds a header."""
    path = Path(path)
    if path.suffix.lower() != ".png":
        path = path.with_suffix(".png")
    exporter = pgx.ImageExporter(widget.ci)
    width = max(int(widget.ci.boundingRect().width()) * scale, 1)
    exporter.parameters()["width"] = width
    exporter.export(str(path))
    if not path.exists():
        raise OSError(f"{path}: the exporter wrote nothing")
    from PySide6 import QtGui

    size = QtGui.QImageReader(str(path)).size()
    remember(path)
    return path, (size.width(), size.height())


def export_npz(
    path: str | Path,
    result: Translation,
    k: int,
    kind: str,
    selected: tuple[int, int],
    extra: dict[str, np.ndarray] | None = None,
) -> Path:
    """Save what is on screen at step ``k``: every view's weights ``[L, H, rows, cols]``, the masks
    (bool, True = masked, as the model was given them), the tokens of both axes and the
    step/view/selection. ``selected`` is 1-based as in titles and the hover read-out:
    (layer, head), or (mask number, 1) in the Masks view. The derived views are added
    (``derived_*``: :func:`gui.state.derived.derived_arrays`, means, rollout, head tables), and
    ``extra`` (the window's alignment lines: :meth:`gui.panels.heads.HeadTools.npz_extra`)."""
    arrays: dict[str, np.ndarray] = {}
    for name in (view.name for view in view_kinds.attention_views()):
        v = view_at(result, k, name)
        arrays[f"{name}_weights"] = v.weights
        arrays[f"{name}_mask"] = v.mask
    for name, m in masks_at(result, k).items():
        arrays[f"mask_{name}"] = m
    arrays.update(derived_arrays(result, k))
    arrays.update(extra or {})
    m = result.maps.truncated(k)
    path = Path(path)
    if path.suffix.lower() != ".npz":
        path = path.with_suffix(".npz")  # numpy would add it anyway: return the real name
    remember(path)
    np.savez_compressed(
        path,
        **arrays,
        src_tokens=np.array(m.src_tokens, dtype=str),
        tgt_tokens=np.array(m.tgt_tokens, dtype=str),
        output_tokens=np.array([s.token for s in result.steps[:k]], dtype=str),
        step=np.int64(k),
        view=np.array(kind),
        selected=np.array(selected) + 1,
        source=np.array(result.source.text),
        mode=np.array(result.mode),
    )
    return Path(path)
