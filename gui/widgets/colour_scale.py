"""How a map's weights become colours: the colour maps and scales offered, the colour levels of a
map, the shared lookup table of a colour map, and the colour bar beside a map.

Weights are drawn with fixed colour levels [0, 1] or, for contrast, scaled to the map's own range
(the colour bar then shows that range and says so).
"""

from __future__ import annotations

import functools

import numpy as np
import pyqtgraph as pg

from gui.widgets.colormap import Colormap, as_pg

COLORMAPS = {"viridis": "viridis", "cividis (colour-blind safe)": "cividis", "inferno": "inferno"}
SCALES = {"fixed": "fixed [0, 1]", "per-map": "per map (min … max)"}
# colour-map entries: over 256, pyqtgraph maps the weights to RGBA with numpy; with 256 or fewer it
# builds an indexed image's colour table in Python (256 qRgb calls) at every render of every map
LUT_POINTS = 512


@functools.lru_cache(maxsize=64)
def lookup_table(cmap: Colormap) -> np.ndarray:
    """``cmap``'s colour table of ``LUT_POINTS`` entries, the same array for the same colour map
    (the grid's thumbnails then share one table, and are coloured as one group per step)."""
    return cmap.lookup_table(LUT_POINTS)


def colour_bar(values: tuple[float, float], cmap: Colormap) -> pg.ColorBarItem:
    """A non-interactive colour bar (``values`` = its first levels) whose tick numbers are the
    values themselves: pyqtgraph's automatic SI prefix is off, else a per-map bar up to 0.02
    reads 10 … 20 with a small "(x0.001)" in its label once the label is shown."""
    bar = pg.ColorBarItem(values=values, colorMap=as_pg(cmap), interactive=False, width=14)
    bar.axis.enableAutoSIPrefix(False)
    return bar


def map_levels(matrix: np.ndarray, mask: np.ndarray | None, scale: str) -> tuple[float, float]:
    """Colour levels of ``matrix [rows, cols]`` (``mask`` the same shape, True = masked, or None):
    ``(0, 1)`` for "fixed"; for "per-map" the min and max of the finite cells that are not masked,
    widened to a non-empty interval. A constant map (every visible cell
    the same weight, e.g. a query row with one key) is widened downwards, so it is drawn in the top
    colour, as its one value is also its maximum, never in the colour of 0.
    Raises ValueError for an unknown scale."""
    if scale == "fixed":
        return (0.0, 1.0)
    if scale != "per-map":
        raise ValueError(f"unknown colour scale {scale!r}; choose one of {', '.join(SCALES)}")
    values = np.asarray(matrix, dtype=np.float64)
    if mask is not None:
        values = values[~np.asarray(mask, dtype=bool)]
    values = values[np.isfinite(values)]
    if values.size == 0:
        return (0.0, 1.0)
    lo, hi = float(values.min()), float(values.max())
    return (lo, hi) if hi > lo else (hi - 1e-6, hi)
