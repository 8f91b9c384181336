"""Presenter-grade display (issue 14): what each drawn pixel means, and that labels stay legible.

Thumbnails max-pool; the enlarged map's title matches the head it shows; labels never overlap."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest

from gui.downsample import all_pool, max_pool
from gui.head_grid import Cell, HeadGrid


def test_max_pool_keeps_every_peak_and_fits():
    rng = np.random.default_rng(0)
    m = rng.random((13, 200)).astype(np.float32) * 0.1
    for col in (0, 57, 199):
        m[3, col] = 1.0
        p = max_pool(m, 13, 70)
        assert p.shape == (13, 70) and p.max() == 1.0
        m[3, col] = 0.0
    p = max_pool(m, 5, 70)
    # independent check: each output pixel is the max of its contiguous bin
    starts_c = (np.arange(70) * 200) // 70
    ends_c = list(starts_c[1:]) + [200]
    starts_r = (np.arange(5) * 13) // 5
    ends_r = list(starts_r[1:]) + [13]
    for i, (r0, r1) in enumerate(zip(starts_r, ends_r)):
        for j, (c0, c1) in enumerate(zip(starts_c, ends_c)):
            assert p[i, j] == m[r0:r1, c0:c1].max()
    assert max_pool(m, 100, 300) is m or np.array_equal(max_pool(m, 100, 300), m)
    mask = np.zeros((2, 4), dtype=bool)
    mask[:, 2:] = True
    mask[0, 1] = True
    assert all_pool(mask, 2, 2).tolist() == [[False, True], [False, True]]
    with pytest.raises(ValueError):
        max_pool(m, 0, 3)


def test_one_hot_columns_survive_in_every_thumbnail(qtbot):
    """200 keys, one-hot heads (each head's hot column elsewhere), thumbnails ~70 px wide."""
    grid = HeadGrid(pg.colormap.get("viridis"))
    qtbot.addWidget(grid)
    grid.resize(640, 300)
    grid.show()
    cells = []
    for h in range(8):
        m = np.zeros((6, 200), dtype=np.float32)
        m[:, 13 + 23 * h] = 1.0  # every query looks at one key
        cells.append(Cell(f"L1 H{h + 1}", m, None, (0, h)))
    grid.set_cells(cells, 8)
    qtbot.waitUntil(lambda: all(s[1] < 200 for s in grid.pooled), timeout=5000)
    for im, (rows, cols) in zip(grid.images, grid.pooled):
        img = im.image.image
        assert img.shape == (rows, cols) and cols < 200
        assert (img.max(axis=1) == 1.0).all()  # the hot column is visible on every row
    assert "maximum" in grid.note.text and "downsampled" in grid.note.text
