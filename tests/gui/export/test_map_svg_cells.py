"""File → Export enlarged map as SVG draws the heatmap as vector cells (one ``<rect>`` per cell in
the colours the screen shows), so librsvg (and browsers) draw sharp cell edges instead of smoothing a
12 × 10 pixel bitmap into blobs; the SVG rasterised equals the PNG export, its text drawn as outlines."""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtCore, QtGui

from gui.export.map_image import export_map
from gui.widgets.colormap import Colormap, as_pg
from gui.widgets.heatmap import Heatmap
from tests.support.gui import type_and_translate


def _rgb(img: QtGui.QImage) -> np.ndarray:
    img = img.convertToFormat(QtGui.QImage.Format.Format_RGB888)
    raw = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine())
    return raw[:, : img.width() * 3].reshape(img.height(), img.width(), 3).astype(int)


def test_svg_equals_png_with_text_as_outlines(qtbot, window, tmp_path):
    from gui.export.files import export_png
    from gui.export.svg import export_svg, rasterize_svg

    window.inputs.pad_to.setValue(20)  # masked pad columns: the hatch overlay is an image too
    type_and_translate(qtbot, window)
    window.set_view("cross")
    qtbot.wait(50)
    hm = window.heatmap
    png, (pw, ph) = export_png(tmp_path / "map.png", hm)
    svg, (sw, sh) = export_svg(tmp_path / "map.svg", hm)
    text = svg.read_text(encoding="utf-8")
    assert "<text" not in text and "<path" in text  # Hangul and all labels as outlines
    a, b = _rgb(rasterize_svg(svg, pw, ph)), _rgb(QtGui.QImage(str(png)))
    assert a.shape == b.shape == (ph, pw, 3) and pw == 2 * sw
    diff = np.abs(a - b)
    assert diff.mean() < 3.0 and (diff.max(-1) > 60).mean() < 0.02  # only anti-aliased edges differ
    scale = pw / hm.width()
    rows, cols = hm.matrix.shape
    for r, c in [(0, 0), (rows - 1, cols - 1), (rows // 2, 1), (0, cols - 1)]:  # every cell where it belongs
        p = hm.view.mapViewToScene(QtCore.QPointF(c + 0.5, r + 0.5))
        x, y = int(p.x() * scale), int(p.y() * scale)
        assert np.abs(a[y, x] - b[y, x]).max() <= 8, (r, c)


RSVG = shutil.which("rsvg-convert")


needs_rsvg = pytest.mark.skipif(
    RSVG is None,
    reason="rsvg-convert is not installed (Debian: apt-get install "
    "librsvg2-bin; .ci/run installs it): the librsvg rasterisation is not checked",
)


ROWS, COLS = 10, 12


ZOOM = 2  # rsvg-convert -z: the SVG at twice its px, as a slide shows it


_CELLS = re.compile(r'<g class="heatmap-cells" transform="matrix\(([^)]*)\)"[^>]*>(.*?)</g>', re.S)


_RECT = re.compile(r'<rect x="(\d+)" y="(\d+)" width="[^"]+" height="[^"]+" fill="#([0-9a-f]{6})"/>')


def _weights() -> np.ndarray:
    """A checkerboard of strong (≈0.9) and weak (≈0.05) weights, a little different in every
    column, so every neighbour of a cell has a very different colour."""
    r, c = np.indices((ROWS, COLS))
    return (np.where((r + c) % 2 == 1, 0.9, 0.05) + 0.004 * c).astype(np.float32)


def _map(qtbot, mask: np.ndarray | None = None) -> Heatmap:
    hm = Heatmap(Colormap.named("viridis"))
    qtbot.addWidget(hm)
    hm.resize(640, 520)
    hm.set_matrix(
        _weights(),
        mask,
        [f"▁tok{i}" for i in range(ROWS)],
        [f"열쇠{j}" for j in range(COLS)],
        title="cross-attention, layer 1, head 1",
    )
    hm.show()
    qtbot.wait(20)
    return hm


def _expected(hm: Heatmap, w: float) -> np.ndarray:
    """The colour map's colour for weight ``w`` at the map's levels (fixed [0, 1] here)."""
    lo, hi = hm.levels
    return np.array(as_pg(hm.cmap).map((w - lo) / (hi - lo), mode="byte")[:3], dtype=int)


def _cells(svg: str) -> tuple[tuple[float, ...], list[tuple[int, int, np.ndarray]]]:
    """The one heatmap group of an exported map: its transform (a, b, c, d, e, f) and its rects
    ``(row, col, rgb)``."""
    groups = _CELLS.findall(svg)
    assert len(groups) == 1
    matrix, body = groups[0]
    rects = [(int(y), int(x), np.array([int(f[i : i + 2], 16) for i in (0, 2, 4)])) for x, y, f in _RECT.findall(body)]
    return tuple(float(v) for v in matrix.split(",")), rects


def test_map_svg_draws_one_rect_per_cell_in_the_screen_colours(qtbot, tmp_path):
    hm = _map(qtbot)
    out = export_map(tmp_path / "map.svg", hm, "svg")
    svg = out.path.read_text(encoding="utf-8")
    ET.fromstring(svg.encode("utf-8"))  # well-formed
    (a, b, c, d, _, _), rects = _cells(svg)
    assert len(rects) == ROWS * COLS and b == c == 0 and a > 10 and d > 10
    assert sorted((r, col) for r, col, _ in rects) == [(r, col) for r in range(ROWS) for col in range(COLS)]
    weights = _weights()
    for r, col, rgb in rects:
        assert np.abs(rgb - _expected(hm, weights[r, col])).max() <= 3, (r, col)
    images = re.findall(r'<image [^>]*width="([^"]+)" height="([^"]+)"', svg)
    assert images == [("1", "256")]  # the colour bar's gradient only: no 12 × 10 bitmap of the map
    assert "<text" not in svg and 'shape-rendering="crispEdges"' in svg
    assert out.rows_drawn == list(range(ROWS)) and out.cols_drawn == list(range(COLS))  # labels as before


def _rasterise(svg: Path) -> np.ndarray:
    png = svg.with_suffix(".rsvg.png")
    subprocess.run([RSVG, "-z", str(ZOOM), "-b", "white", str(svg), "-o", str(png)], check=True, timeout=60)
    return _rgb(QtGui.QImage(str(png)))


def _transition(line: np.ndarray, a: np.ndarray, b: np.ndarray, tol: int = 12) -> int:
    """Pixels of ``line`` (RGB, from inside one cell to inside its neighbour) whose colour is
    neither cell's: the width of the ramp between them."""
    near_a = np.abs(line - a).max(-1) <= tol
    near_b = np.abs(line - b).max(-1) <= tol
    return int((~near_a & ~near_b).sum())


@needs_rsvg
def test_librsvg_draws_sharp_cells_in_the_colour_map_colours(qtbot, tmp_path):
    mask = np.zeros((ROWS, COLS), bool)
    mask[:, -1] = True  # a masked column: hatched, as on screen
    hm = _map(qtbot, mask)
    assert hm.show_values  # 10 × 12: each cell prints its weight, over the cell as on screen
    out = export_map(tmp_path / "values.svg", hm, "svg")
    (a, _, _, d, e, f), _ = _cells(out.path.read_text(encoding="utf-8"))

    def x_of(col: float) -> int:
        return int(round(ZOOM * (e + col * a)))

    def y_of(row: float) -> int:
        return int(round(ZOOM * (f + row * d)))

    px = _rasterise(out.path)
    middle = px[y_of(0.3) : y_of(0.7), x_of(0.1) : x_of(0.9)]  # cell (0, 0): weak, dark; its value in light text
    assert (middle.min(-1) > 200).sum() > 10
    hm.set_show_values(False)  # the cells alone from here
    out = export_map(tmp_path / "map.svg", hm, "svg")
    assert _cells(out.path.read_text(encoding="utf-8"))[0] == (a, 0, 0, d, e, f)
    px = _rasterise(out.path)
    assert px.shape[:2] == (ZOOM * out.size[1], ZOOM * out.size[0])

    weights, widths = _weights(), []
    for r in range(ROWS):
        for col in range(COLS - 1):
            inside = px[y_of(r + 0.2) : y_of(r + 0.8), x_of(col + 0.2) : x_of(col + 0.8)].reshape(-1, 3)
            want = _expected(hm, weights[r, col])
            assert np.abs(inside - want).max() <= 4, (r, col, want, inside.min(0), inside.max(0))  # flat, the map's colour
            if col < COLS - 2:  # across the edge to the right neighbour, through the middle of the row
                line = px[y_of(r + 0.5), x_of(col + 0.5) : x_of(col + 1.5)]
                widths.append(_transition(line, want, _expected(hm, weights[r, col + 1])))
            if r < ROWS - 1:  # down to the neighbour below
                line = px[y_of(r + 0.5) : y_of(r + 1.5), x_of(col + 0.5)]
                widths.append(_transition(line, want, _expected(hm, weights[r + 1, col])))
    assert max(widths) <= 1, f"cell edges blur over {max(widths)} px"  # Qt's bitmap, smoothed: a ramp of a cell's width
    # the masked column is the screen's hatch: greys only, light and dark stripes
    hatch = px[y_of(0.1) : y_of(ROWS - 0.1), x_of(COLS - 0.9) : x_of(COLS - 0.1)].reshape(-1, 3)
    assert (hatch.max(-1) - hatch.min(-1)).max() <= 3
    assert (np.abs(hatch - 215).max(-1) <= 12).mean() > 0.5 and (np.abs(hatch - 120).max(-1) <= 12).mean() > 0.05
