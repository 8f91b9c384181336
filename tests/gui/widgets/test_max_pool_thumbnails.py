"""Thumbnails max-pool: every peak survives the reduction to the thumbnail's size, equal to numpy's
``reduceat`` (NaN included), and empty maps with many keys are not pooled."""

from __future__ import annotations

import numpy as np
import pytest

from gui.state.view_spec import Cell
from gui.widgets.colormap import Colormap
from gui.widgets.downsample import all_pool, max_pool
from gui.widgets.head_grid import HeadGrid


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


@pytest.mark.parametrize("shape", [(3, 7, 9), (48, 40, 40), (2, 13, 200), (1, 5, 3000)])
def test_max_pool_equals_numpy_reduceat_on_stacks_with_nan(shape):
    """The strided-gather pooling gives exactly ``np.maximum.reduceat``'s values over the same bins
    (every target size, narrow and wide bins, a NaN kept where it falls)."""
    rng = np.random.default_rng(sum(shape))
    x = rng.random(shape).astype(np.float32)
    x[0, 1, 2] = np.nan
    rows, cols = shape[1:]
    for max_rows, max_cols in [(rows - 1, cols - 1), (max(rows // 2, 1), max(cols // 3, 1)), (1, 1), (rows, 7)]:
        want = x
        if cols > max_cols:
            want = np.maximum.reduceat(want, (np.arange(max_cols) * cols) // max_cols, axis=-1)
        if rows > max_rows:
            want = np.maximum.reduceat(want, (np.arange(max_rows) * rows) // max_rows, axis=-2)
        np.testing.assert_array_equal(max_pool(x, max_rows, max_cols), want)  # NaN where reduceat has NaN


def test_one_hot_columns_survive_in_every_thumbnail(qtbot):
    """200 keys, one-hot heads (each head's hot column elsewhere), thumbnails ~70 px wide."""
    grid = HeadGrid(Colormap.named("viridis"))
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


def test_empty_maps_with_many_keys_are_not_pooled(qtbot):
    """Step 0 of the decoder: no query rows yet, 200 keys — nothing to pool, no error."""
    grid = HeadGrid(Colormap.named("viridis"))
    qtbot.addWidget(grid)
    grid.resize(300, 200)
    grid.show()
    qtbot.wait(20)
    mask = np.zeros((0, 200), dtype=bool)
    grid.set_cells([Cell("L1 H1", np.zeros((0, 200), np.float32), mask, (0, 0))], 1)
    assert grid.pooled == [(0, 200)] and grid.note.text == ""
