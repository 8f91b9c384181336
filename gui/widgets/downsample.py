"""Max-pooling for thumbnails: a map with more keys (or queries) than pixels keeps every peak.

Plain striding drops columns (with 200 keys on 70 pixels, a one-hot head can vanish); here each
output pixel holds the **maximum** of the cells it covers, so a single hot column always shows.
No Qt here.
"""

from __future__ import annotations

import numpy as np


def bin_starts(n: int, bins: int) -> np.ndarray:
    """Start index of each of ``bins`` near-equal contiguous bins over ``n`` cells (bins ≤ n)."""
    return (np.arange(bins) * n) // bins


def max_pool(matrix: np.ndarray, max_rows: int, max_cols: int) -> np.ndarray:
    """``matrix [..., rows, cols]`` reduced to at most ``[..., max_rows, max_cols]`` by taking the
    maximum over contiguous bins along each of the last two axes that is too long; unchanged when
    it already fits. Leading axes (a stack of maps pooled in one call) are kept.
    Raises ValueError when a limit is below 1."""
    if max_rows < 1 or max_cols < 1:
        raise ValueError("max_pool needs at least one row and one column")
    out = np.asarray(matrix)
    rows, cols = out.shape[-2:]
    if cols > max_cols:
        out = _max_bins(out, max_cols, -1)
    if rows > max_rows:
        out = _max_bins(out, max_rows, -2)
    return out


def _max_bins(x: np.ndarray, bins: int, axis: int) -> np.ndarray:
    """The maximum over each of ``bins`` contiguous bins (:func:`bin_starts`) along ``axis``.

    Bins hold k or k − 1 cells; for small k the maximum of k strided gathers (the j-th cell of
    every bin, the bin's last where it has fewer) is several times faster than
    ``np.maximum.reduceat``, which loops over bins one short row at a time. Same values, NaN
    included (``np.maximum`` propagates it as reduceat does)."""
    n = x.shape[axis]
    starts = bin_starts(n, bins)
    ends = np.append(starts[1:], n)
    k = int((ends - starts).max())
    if k > 32:  # a few very wide bins: reduceat's loop is short
        return np.maximum.reduceat(x, starts, axis=axis)
    out = np.take(x, starts, axis=axis)
    for j in range(1, k):
        out = np.maximum(out, np.take(x, np.minimum(starts + j, ends - 1), axis=axis))
    return out


def all_pool(mask: np.ndarray, max_rows: int, max_cols: int) -> np.ndarray:
    """Boolean ``mask`` (True = masked) pooled like :func:`max_pool`: a pixel is masked only when
    every cell it covers is masked (so a visible weight is never hidden under the hatch)."""
    return ~max_pool(~np.asarray(mask, dtype=bool), max_rows, max_cols)
