"""How masks and masked cells look, shared by the heatmap, the mask panel, the main window and
Present mode (one place, so every view draws a mask the same way)."""

from __future__ import annotations

import functools

import numpy as np

from gui.widgets.colormap import Colormap

HATCH = 4  # overlay pixels per cell side (the minimum; small maps get more, see hatch_size)
MASKED_RGB, OPEN_RGB = (70, 70, 70), (150, 205, 150)  # the mask legend's two colours
MASK_CMAP = Colormap.from_stops("mask", (0.0, OPEN_RGB), (1.0, MASKED_RGB))  # a mask drawn as an image: 0 open, 1 masked
LEGEND = (
    "<span style='color:#464646'>■</span> masked (True) &nbsp; "
    "<span style='color:#96cd96'>■</span> may attend (False) &nbsp; "
    "▨ key not computed yet"
)


def hatch_size(rows: int, cols: int) -> int:
    """Overlay pixels per cell side: more for small maps, so the hatch stays fine-grained."""
    return int(max(HATCH, min(24, 192 // max(rows, cols, 1))))


@functools.lru_cache(maxsize=16)
def hatch_stripes(rows: int, cols: int) -> np.ndarray:
    """Bool ``[rows, cols]``: True on the hatch's diagonal stripes, where ``(y + x) % HATCH == 0``
    for pixel (y, x). Summed from the two axes' residues (each ``< HATCH``), not from full index
    grids: the sum is a stripe pixel when it is 0 or HATCH. Read-only, one array per shape (a
    decoder step asks for the same few shapes again)."""
    s = (np.arange(rows) % HATCH)[:, None] + (np.arange(cols) % HATCH)[None, :]
    out = (s == 0) | (s == HATCH)
    out.flags.writeable = False
    return out
