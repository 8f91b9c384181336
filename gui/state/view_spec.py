"""What is drawn, decided in one place (no Qt): the spec of the enlarged map and the cells of the
layer × head grid for the view model's result, step, view kind and selection.

The main window, Present mode and the head tools all render these specs; none of them decides
on its own which map is enlarged or how it is titled. Masks are bool, **True = masked** (may not
attend); mask pictures are float images (1 masked, 0 may attend, NaN key not computed yet).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gui.state import derived as dv
from gui.state import view_kinds
from gui.state.view_data import MASK_TITLES, ViewData, mask_cells
from gui.state.view_kinds import view_at, view_title


@dataclass
class Cell:
    """One grid thumbnail: ``matrix [rows, cols]``, ``mask [rows, cols]`` (True = masked) or None,
    a title and the ``key`` a click on it reports: ``(layer, head)`` 0-based, a derived key
    (``("mean", layer)``, ``("rollout", 0)``) or ``(mask index, 0)``."""

    title: str
    matrix: np.ndarray
    mask: np.ndarray | None
    key: tuple


@dataclass
class MapSpec:
    """The enlarged map. ``mask_picture`` True: ``matrix`` is a mask image (1 / 0 / NaN) drawn
    with the mask colours and legend, ``mask`` is None. Otherwise ``matrix [rows, cols]`` are
    attention weights (rows = queries, columns = keys) and ``mask [rows, cols]`` the mask used
    (True = masked). ``key`` is the grid cell it enlarges; ``view`` the :class:`ViewData` it comes
    from (None for masks); ``derived`` the :class:`gui.state.derived.DerivedMap` when a derived
    cell is enlarged."""

    matrix: np.ndarray
    mask: np.ndarray | None
    row_tokens: list[str]
    col_tokens: list[str]
    title: str
    row_label: str
    col_label: str
    key: tuple
    mask_picture: bool = False
    view: ViewData | None = None
    derived: dv.DerivedMap | None = None


@dataclass
class GridSpec:
    """The grid: ``cells`` in reading order, ``n_cols`` per row, the ``selected`` cell's key."""

    cells: list[Cell]
    n_cols: int
    selected: tuple


def clamped(vm) -> tuple[int, int]:
    """The selected (layer, head), or (mask index, 0) in the Masks view, clamped to the result."""
    r, k = vm.result, vm.step
    if view_kinds.get(vm.kind).is_masks:
        return max(0, min(vm.selected[0], len(mask_cells(r, k)) - 1)), 0
    n_layers, n_heads = view_at(r, k, vm.kind).weights.shape[:2]
    return max(0, min(vm.selected[0], n_layers - 1)), max(0, min(vm.selected[1], n_heads - 1))


def _derived(vm, v: ViewData) -> tuple[list[dv.DerivedMap], dv.DerivedMap | None]:
    maps = dv.derived_maps(vm.result, vm.step, v)
    return maps, next((d for d in maps if d.key == vm.derived), None) if vm.derived else None


def grid_titles(kind: str, n_layers: int, n_heads: int) -> tuple[list[str], int]:
    """The titles of a view's grid cells and its number of columns, from the model's shape alone
    (what :func:`grid_spec` will show): heads "L1 H1" …, each layer's mean, the encoder's
    rollout; or the four masks two per row. Lets the grid be laid out before a result exists."""
    view = view_kinds.get(kind)
    if view.is_masks:
        return list(MASK_TITLES), 2
    heads = [f"L{li + 1} H{hi + 1}" for li in range(n_layers) for hi in range(n_heads)]
    derived = [dv.mean_title(li) for li in range(n_layers)] if "mean" in view.derived else []
    derived += [dv.ROLLOUT_TITLE] if "rollout" in view.derived else []
    return heads + derived, n_heads


def grid_spec(vm) -> GridSpec | None:
    """The grid for the view model's state: every (layer, head) of the view then its derived cells
    (:func:`gui.state.derived.derived_maps`), or the four masks two per row; None before a result."""
    r, k = vm.result, vm.step
    if r is None:
        return None
    if view_kinds.get(vm.kind).is_masks:
        cells = [Cell(t, np.nan_to_num(x), np.isnan(x), (j, 0)) for j, (t, x, _, _) in enumerate(mask_cells(r, k))]
        return GridSpec(cells, 2, clamped(vm))
    v = view_at(r, k, vm.kind)
    n_layers, n_heads = v.weights.shape[:2]
    heads = [Cell(f"L{li + 1} H{hi + 1}", v.weights[li, hi], v.mask, (li, hi)) for li in range(n_layers) for hi in range(n_heads)]
    maps, chosen = _derived(vm, v)
    return GridSpec(
        heads + [Cell(d.title, d.matrix, d.mask, d.key) for d in maps], n_heads, chosen.key if chosen else clamped(vm)
    )


def enlarged_spec(vm, presenter: bool = False) -> MapSpec | None:
    """The enlarged map for the view model's state (None before a result): the chosen mask, the
    chosen derived cell, or the chosen head. ``presenter`` titles a head "layer l / L, head h / H"
    (Present mode shows no grid to count on) and keeps that title before the first decoder step."""
    r, k = vm.result, vm.step
    if r is None:
        return None
    view = view_kinds.get(vm.kind)
    if view.is_masks:
        i = clamped(vm)[0]
        title, x, rows, cols = mask_cells(r, k)[i]
        return MapSpec(x, None, rows, cols, title, "", "", (i, 0), mask_picture=True)
    v = view_at(r, k, vm.kind)
    _, chosen = _derived(vm, v)
    if chosen is not None:
        return MapSpec(
            chosen.matrix,
            chosen.mask,
            chosen.row_tokens,
            chosen.col_tokens,
            dv.enlarged_title(vm.kind, chosen, r),
            chosen.row_label,
            chosen.col_label,
            chosen.key,
            view=v,
            derived=chosen,
        )
    layer, head = clamped(vm)
    n_layers, n_heads = v.weights.shape[:2]
    if presenter:
        title = f"{view_title(r, vm.kind)} — layer {layer + 1} / {n_layers}, head {head + 1} / {n_heads}"
    elif k == 0 and view.follows_steps:
        title = f"{view.title}: no decoder step yet — press Step ▶ (→)"
    else:
        title = f"{view_title(r, vm.kind)} — layer {layer + 1}, head {head + 1}"
    return MapSpec(
        v.weights[layer, head], v.mask, v.row_tokens, v.col_tokens, title, v.row_label, v.col_label, (layer, head), view=v
    )


__all__ = ["Cell", "GridSpec", "MapSpec", "clamped", "enlarged_spec", "grid_spec", "grid_titles"]
