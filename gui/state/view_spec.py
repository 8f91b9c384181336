"""What is drawn, decided in one place (no Qt): one :class:`ViewFrame` per state of the view
model — the maps cut to the step, the view's data, its derived cells, the layer × head grid, the
enlarged map with its titles, and the selection clamped to the result.

The view model builds the frame once per change (:meth:`gui.state.view_model.ViewModel.frame`);
the main window, Present mode, the head tools and the lecture pages all render that same object,
and none of them decides on its own which map is enlarged, how it is titled, or clamps anything.
Masks are bool, **True = masked** (may not attend); mask pictures are float images (1 masked,
0 may attend, NaN key not computed yet).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from gui.state import derived as dv
from gui.state import view_kinds
from gui.state.view_data import MASK_TITLES, StepMaps, ViewData, mask_cells, step_maps
from gui.state.view_kinds import view_at, view_title

if TYPE_CHECKING:
    from core.decoding.translate import Translation


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
    cell is enlarged. ``presenter_title``: the title where no grid is shown to count on (Present
    mode, lecture pages): a head as "layer l / L, head h / H"."""

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
    presenter_title: str = ""


@dataclass
class GridSpec:
    """The grid: ``cells`` in reading order, ``n_cols`` per row, the ``selected`` cell's key."""

    cells: list[Cell]
    n_cols: int
    selected: tuple


@dataclass(frozen=True)
class ViewFrame:
    """Everything drawn for one state: ``step`` the result's maps cut to the step (once),
    ``kind`` the view, ``selected`` the (layer, head) or (mask index, 0) clamped to the result,
    ``derived_key`` the enlarged derived cell's key (None: a head or a mask is enlarged; a key
    this view has no cell for is dropped), ``view`` the view's data (None for the masks),
    ``derived`` its derived cells, ``masks`` the Masks view's cells (None for other views),
    ``grid``, ``enlarged``, and ``picture`` what the pictures depend on (see :meth:`same_picture`)."""

    step: StepMaps
    kind: str
    selected: tuple[int, int]
    derived_key: tuple | None
    view: ViewData | None
    derived: list[dv.DerivedMap]
    masks: list[tuple[str, np.ndarray, list[str], list[str]]] | None
    grid: GridSpec
    enlarged: MapSpec
    picture: tuple = field(default=(), compare=False)

    @property
    def result(self) -> Translation:
        return self.step.result

    def same_picture(self, other: ViewFrame | None) -> bool:
        """True when ``other``'s grid and enlarged map are this frame's: same view, selection and
        maps. Encoder maps do not change while the decoder steps, so stepping in the encoder view
        keeps the picture; the tensors are compared by identity (a live state's new objects could
        reuse an id)."""
        return other is not None and other.picture[0] is self.picture[0] and other.picture[1:] == self.picture[1:]


def _clamp(selected: tuple, limits: tuple[int, int]) -> tuple[int, int]:
    return max(0, min(int(selected[0]), limits[0] - 1)), max(0, min(int(selected[1]), limits[1] - 1))


def grid_titles(kind: str, n_layers: int, n_heads: int) -> tuple[list[str], int]:
    """The titles of a view's grid cells and its number of columns, from the model's shape alone
    (what :func:`build_frame`'s grid will show): heads "L1 H1" …, each layer's mean, the encoder's
    rollout; or the four masks two per row. Lets the grid be laid out before a result exists."""
    view = view_kinds.get(kind)
    if view.is_masks:
        return list(MASK_TITLES), 2
    heads = [f"L{li + 1} H{hi + 1}" for li in range(n_layers) for hi in range(n_heads)]
    derived = [dv.mean_title(li) for li in range(n_layers)] if "mean" in view.derived else []
    derived += [dv.ROLLOUT_TITLE] if "rollout" in view.derived else []
    return heads + derived, n_heads


def build_frame(result: Translation, k: int, kind: str, selected: tuple, derived_key: tuple | None) -> ViewFrame:
    """The :class:`ViewFrame` of ``result`` at step ``k`` in view ``kind`` with ``selected``
    (layer, head) (or mask index, 0) and the enlarged derived cell ``derived_key`` (or None).
    The maps are cut to the step once and every part of the frame is made from that cut.

    Raises:
        ValueError: an unknown view kind."""
    view = view_kinds.get(kind)
    step = step_maps(result, k)
    if view.is_masks:
        masks = mask_cells(step)
        i = _clamp(selected, (len(masks), 1))
        title, x, rows, cols = masks[i[0]]
        grid = GridSpec([Cell(t, np.nan_to_num(im), np.isnan(im), (j, 0)) for j, (t, im, _, _) in enumerate(masks)], 2, i)
        enlarged = MapSpec(x, None, rows, cols, title, "", "", i, mask_picture=True, presenter_title=title)
        return ViewFrame(step, kind, i, None, None, [], masks, grid, enlarged, (result.maps, kind, k, i, None))
    v = view_at(result, k, kind, step)
    n_layers, n_heads = v.weights.shape[:2]
    layer, head = _clamp(selected, (n_layers, n_heads))
    maps = dv.derived_maps(result, k, v)
    chosen = next((d for d in maps if d.key == derived_key), None) if derived_key else None
    heads = [Cell(f"L{li + 1} H{hi + 1}", v.weights[li, hi], v.mask, (li, hi)) for li in range(n_layers) for hi in range(n_heads)]
    cells = heads + [Cell(d.title, d.matrix, d.mask, d.key) for d in maps]
    grid = GridSpec(cells, n_heads, chosen.key if chosen else (layer, head))
    if chosen is not None:
        title = dv.enlarged_title(kind, chosen, result)
        enlarged = MapSpec(
            chosen.matrix,
            chosen.mask,
            chosen.row_tokens,
            chosen.col_tokens,
            title,
            chosen.row_label,
            chosen.col_label,
            chosen.key,
            view=v,
            derived=chosen,
            presenter_title=title,
        )
    else:
        name = view_title(result, kind)
        presenter = f"{name} — layer {layer + 1} / {n_layers}, head {head + 1} / {n_heads}"
        if k == 0 and view.follows_steps:
            title = f"{view.title}: no decoder step yet — press Step ▶ (→)"
        else:
            title = f"{name} — layer {layer + 1}, head {head + 1}"
        enlarged = MapSpec(
            v.weights[layer, head],
            v.mask,
            v.row_tokens,
            v.col_tokens,
            title,
            v.row_label,
            v.col_label,
            (layer, head),
            view=v,
            presenter_title=presenter,
        )
    source, drawn_step = view.drawn_key(result, k)
    key = chosen.key if chosen else None
    return ViewFrame(
        step, kind, (layer, head), key, v, maps, None, grid, enlarged, (source, kind, drawn_step, (layer, head), key)
    )


__all__ = ["Cell", "GridSpec", "MapSpec", "ViewFrame", "build_frame", "grid_titles"]
