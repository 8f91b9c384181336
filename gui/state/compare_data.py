"""Side-by-side data for the ablation and compare panels (no Qt here).

A :class:`HeadMap` is one head's map of a finished run (rows = queries, columns = keys; the
mask is True = masked). :func:`compare_maps` gives the difference B − A where both maps have the
same shape **and** the same row and column tokens, else no difference and a one-line reason.
Layers and heads are 0-based in code and 1-based in every text shown.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.decoding.translate import Translation
from core.errors import InputError
from gui.state import view_kinds
from gui.state.view_data import MapData, quote
from gui.state.view_kinds import view_at


@dataclass
class HeadMap(MapData):
    """One head: weights ``[rows, cols]`` (float), mask ``[rows, cols]`` (bool, True = masked), axis
    tokens, axis labels and a title naming kind, layer and head (1-based)."""

    title: str


def head_map(result: Translation, kind: str, layer: int, head: int, label: str = "") -> HeadMap:
    """The map of view ``kind`` (an attention view of :mod:`gui.state.view_kinds`), 0-based
    ``layer``/``head``, after the whole output of ``result`` (every decoder step).

    Raises:
        InputError: the layer or head does not exist in this run's model (message 1-based).
    """
    v = view_at(result, len(result.maps.tgt_tokens), kind)
    n_layers, n_heads = v.weights.shape[:2]
    if not (0 <= layer < n_layers and 0 <= head < n_heads):
        raise InputError(
            f"{label + ': ' if label else ''}layer {layer + 1}, head {head + 1} does not exist "
            f"({view_kinds.get(kind).title.lower()} has layers 1..{n_layers}, heads 1..{n_heads})"
        )
    title = f"{label + ' — ' if label else ''}{view_kinds.get(kind).title}, L{layer + 1} H{head + 1}"
    return HeadMap(
        np.asarray(v.weights[layer, head], dtype=np.float64),
        np.asarray(v.mask, dtype=bool),
        list(v.row_tokens),
        list(v.col_tokens),
        v.row_label,
        v.col_label,
        title,
    )


def map_arrays(prefix: str, hm: HeadMap) -> dict[str, np.ndarray]:
    """One drawn map for an .npz: ``{prefix}`` weights ``[rows, cols]``, ``{prefix}_mask`` (bool,
    True = masked), ``{prefix}_row_tokens`` / ``{prefix}_col_tokens`` and ``{prefix}_title``."""
    return {
        prefix: hm.weights,
        f"{prefix}_mask": hm.mask,
        f"{prefix}_row_tokens": np.array(hm.row_tokens, dtype=str),
        f"{prefix}_col_tokens": np.array(hm.col_tokens, dtype=str),
        f"{prefix}_title": np.array(hm.title),
    }


def mismatch(a: HeadMap, b: HeadMap) -> str:
    """Why no difference map can be drawn ("" when shapes and tokens match)."""
    if a.weights.shape != b.weights.shape:
        (ra, ca), (rb, cb) = a.weights.shape, b.weights.shape
        return (
            f"no difference map: the shapes differ (A {ra}×{ca}, B {rb}×{cb} queries × keys); "
            "both maps are drawn on the same grid, cell i of A beside cell i of B"
        )
    for name, ta, tb in (("query", a.row_tokens, b.row_tokens), ("key", a.col_tokens, b.col_tokens)):
        for i, (x, y) in enumerate(zip(ta, tb)):
            if x != y:
                return (
                    f"no difference map: {name} {i + 1} differs (A {quote(x)}, B {quote(y)}); "
                    "a difference of weights on different tokens would mislead"
                )
    return ""


@dataclass
class Comparison:
    """Two head maps and, where they match, ``diff = B − A`` ``[rows, cols]`` with ``diff_mask``
    (True where either run masked the cell); ``reason`` says why there is no difference map."""

    a: HeadMap
    b: HeadMap
    diff: np.ndarray | None
    diff_mask: np.ndarray | None
    reason: str

    @property
    def max_abs(self) -> float:
        """Largest |B − A| over cells masked in neither run (0.0 without a difference map)."""
        if self.diff is None or self.diff_mask is None:
            return 0.0
        open_cells = self.diff[~self.diff_mask]
        return float(np.abs(open_cells).max()) if open_cells.size else 0.0


def compare_maps(a: HeadMap, b: HeadMap, by_position: bool = False) -> Comparison:
    """B − A where shapes and tokens match (masked cells set to 0 and flagged), else the reason.

    ``by_position``: also draw B − A where only the tokens differ (same shape, e.g. 나는 … vs
    너는 …); ``reason`` then names the differing positions, and :func:`position_labels` labels them.
    """
    reason = mismatch(a, b)
    if reason and not (by_position and a.weights.shape == b.weights.shape):
        return Comparison(a, b, None, None, reason)
    if reason:
        n = sum(x != y for x, y in zip(a.row_tokens, b.row_tokens)) + sum(x != y for x, y in zip(a.col_tokens, b.col_tokens))
        reason = f"B − A by position: {n} token label(s) differ, shown as A|B ({reason.split(': ', 1)[1].split(';')[0]})"
    mask = a.mask | b.mask
    diff = np.where(mask, 0.0, b.weights - a.weights)
    return Comparison(a, b, diff, mask, reason)


def position_labels(a: list[str], b: list[str]) -> list[str]:
    """Axis labels for a by-position difference: the token where A and B agree, else "A|B"."""
    return [x if x == y else f"{x}|{y}" for x, y in zip(a, b)]


def top_k_at(result: Translation, k: int) -> tuple[list[tuple[str, float]], str | None, int]:
    """Top-k candidates at step ``k`` clamped to ``1..n`` (the run may be shorter or longer than
    the main view's): ``(candidates, chosen token, the step used)``; empty before any step."""
    n = len(result.steps)
    if n == 0:
        return [], None, 0
    k = max(1, min(int(k), n))
    st = result.steps[k - 1]
    return list(st.top_k), st.token, k


@dataclass
class TokenRow:
    """One token of the unablated output: its log P (nats) unablated and ablated, and the change."""

    step: int
    token: str
    before: float
    after: float

    @property
    def change(self) -> float:
        return self.after - self.before


def token_rows(report) -> list[TokenRow]:
    """Rows of a :class:`core.analysis.compare.AblationReport`, one per unablated output token."""
    steps = report.result.original.steps
    return [
        TokenRow(i + 1, steps[i].token, b, a) for i, (b, a) in enumerate(zip(report.original_logprobs, report.ablated_logprobs))
    ]


__all__ = [
    "HeadMap",
    "head_map",
    "map_arrays",
    "Comparison",
    "compare_maps",
    "position_labels",
    "mismatch",
    "top_k_at",
    "TokenRow",
    "token_rows",
]
