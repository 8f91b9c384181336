"""Export the current view (pyqtgraph exporters: PNG, SVG) and the displayed tensors (.npz)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph.exporters as pgx

from core.inference.translate import Translation
from gui.view_data import KINDS, masks_at, view_at


def export_view(path: str | Path, grid, heatmap, fmt: str) -> list[Path]:
    """Write the enlarged heatmap to ``path`` and the layer × head grid beside it as
    ``<stem>-grid.<fmt>``. Returns the written paths. Raises OSError on write failure."""
    path = Path(path)
    if path.suffix.lower() != f".{fmt}":
        path = path.with_suffix(f".{fmt}")
    grid_path = path.with_name(f"{path.stem}-grid.{fmt}")
    exporter_cls = pgx.ImageExporter if fmt == "png" else pgx.SVGExporter
    for target, widget in ((path, heatmap), (grid_path, grid)):
        exporter = exporter_cls(widget.ci)
        if fmt == "png":
            exporter.parameters()["width"] = max(800, int(widget.ci.boundingRect().width()) * 2)
        try:
            exporter.export(str(target))
        except ValueError:
            # pyqtgraph's SVGExporter cannot parse the path syntax newer Qt writes
            # (pyqtgraph issue #3485); fall back to Qt's own SVG generator for the same scene.
            _qt_svg(widget, target)
        if not target.exists():
            raise OSError(f"{target}: the exporter wrote nothing")
    return [path, grid_path]


def _qt_svg(widget, target: Path) -> None:
    from PySide6 import QtCore, QtGui, QtSvg

    gen = QtSvg.QSvgGenerator()
    gen.setFileName(str(target))
    size = widget.size()
    gen.setSize(size)
    gen.setViewBox(QtCore.QRect(0, 0, size.width(), size.height()))
    gen.setTitle("Attention Studio export")
    painter = QtGui.QPainter(gen)
    try:
        widget.render(painter)
    finally:
        painter.end()


def export_npz(path: str | Path, result: Translation, k: int, kind: str, selected: tuple[int, int]) -> Path:
    """Save what is on screen at step ``k``: every view's weights ``[L, H, rows, cols]``, the masks
    (bool, True = masked), the tokens of both axes and the step/view/selection."""
    arrays: dict[str, np.ndarray] = {}
    for name in KINDS[:3]:
        v = view_at(result, k, name)
        arrays[f"{name}_weights"] = v.weights
        arrays[f"{name}_mask"] = v.mask
    for name, m in masks_at(result, k).items():
        arrays[f"mask_{name}"] = m
    m = result.maps.truncated(k)
    np.savez_compressed(
        path, **arrays,
        src_tokens=np.array(m.src_tokens, dtype=str), tgt_tokens=np.array(m.tgt_tokens, dtype=str),
        output_tokens=np.array([s.token for s in result.steps[:k]], dtype=str),
        step=np.int64(k), view=np.array(kind), selected=np.array(selected), source=np.array(result.source.text),
        mode=np.array(result.mode),
    )
    return Path(path)
