"""How masks and masked cells look (the mask image's two colours and legend, the hatch over masked
cells), shared by the heatmap, the head grid, the mask panel, the main window and Present mode
(one place, so every view draws a mask the same way)."""

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
# the overlay's colours (RGBA as one uint32 each): transparent, masked, masked on a stripe
_OVERLAY_WORDS = np.array([[0, 0, 0, 0], [215, 215, 215, 255], [120, 120, 120, 255]], dtype=np.uint8).view(np.uint32).ravel()


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


def mask_overlay(mask: np.ndarray, pixels: tuple[int, int] | None = None) -> np.ndarray:
    """RGBA uint8 overlay ``[rows·h, cols·h, 4]`` for ``mask [rows, cols]`` (bool, True = masked):
    hatched grey on masked cells, transparent elsewhere.

    h is :func:`hatch_size`, or, given the ``pixels`` (rows, cols) the map is drawn on, at most as
    many overlay pixels per cell as the map has screen pixels per cell (at least 1): a thumbnail's
    overlay is then drawn about 1:1, its stripes one screen pixel wide, instead of an overlay 16
    times the thumbnail's area being scaled down (and aliased) at every redraw."""
    rows, cols = mask.shape
    h = hatch_size(rows, cols)
    if pixels is not None:
        h = max(1, min(h, pixels[0] // max(rows, 1), pixels[1] // max(cols, 1)))
    big = np.repeat(np.repeat(np.asarray(mask, dtype=np.uint8), h, 0), h, 1)  # 1 on masked pixels
    shade = big + (big & hatch_stripes(*big.shape))  # 0 not masked, 1 masked, 2 masked stripe
    return np.take(_OVERLAY_WORDS, shade).view(np.uint8).reshape(*big.shape, 4)  # one 4-byte gather per pixel
