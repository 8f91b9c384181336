"""The hatch patterns (masked cells in a map, absent keys in a mask image) equal their per-pixel
definitions: pixel (y, x) of cell (y // h, x // h) is on a stripe where (y + x) % HATCH == 0."""

from __future__ import annotations

import numpy as np
import pytest

from gui.widgets.map_style import HATCH, MASKED_RGB, OPEN_RGB, hatch_size, hatch_stripes, mask_overlay
from gui.widgets.mask_panel import mask_rgba


def _by_pixel(cells: np.ndarray, h: int, colour_of) -> np.ndarray:
    """RGBA ``[rows·h, cols·h, 4]`` built one pixel at a time from ``colour_of(cell value, on stripe)``."""
    rows, cols = cells.shape
    out = np.zeros((rows * h, cols * h, 4), dtype=np.uint8)
    for y in range(rows * h):
        for x in range(cols * h):
            out[y, x] = colour_of(cells[y // h, x // h], (y + x) % HATCH == 0)
    return out


def test_hatch_stripes_is_the_modulo_rule() -> None:
    yy, xx = np.indices((23, 37))
    np.testing.assert_array_equal(hatch_stripes(23, 37), (yy + xx) % HATCH == 0)
    assert hatch_stripes(0, 5).shape == (0, 5)


@pytest.mark.parametrize(("shape", "pixels"), [((5, 7), None), ((6, 4), (13, 9)), ((40, 40), (80, 120)), ((3, 9), (1, 1))])
def test_mask_overlay_by_pixel(shape, pixels) -> None:
    mask = np.random.default_rng(sum(shape)).random(shape) < 0.4
    h = hatch_size(*shape)
    if pixels is not None:
        h = max(1, min(h, pixels[0] // shape[0], pixels[1] // shape[1]))

    def colour(masked, stripe):
        return (0, 0, 0, 0) if not masked else (120, 120, 120, 255) if stripe else (215, 215, 215, 255)

    np.testing.assert_array_equal(mask_overlay(mask, pixels), _by_pixel(mask, h, colour))


def test_mask_rgba_by_pixel() -> None:
    img = np.random.default_rng(4).choice([0.0, 1.0, np.nan], size=(6, 5)).astype(np.float32)
    img[0, 0] = 0.5  # neither 0, 1 nor absent: white, as an absent key off the stripes

    def colour(value, stripe):
        if value == 1:
            return (*MASKED_RGB, 255)
        if value == 0:
            return (*OPEN_RGB, 255)
        return (175, 175, 175, 255) if np.isnan(value) and stripe else (255, 255, 255, 255)

    np.testing.assert_array_equal(mask_rgba(img), _by_pixel(img, hatch_size(6, 5), colour))
