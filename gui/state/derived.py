"""Derived views of the attention on screen, without Qt: the mean over heads per layer,
the encoder attention rollout, the head table and the arrays the .npz export adds.

Every number comes from :mod:`core.analysis.head_stats` applied to the model's own tensors (the
maps of the result at step k); nothing is recomputed differently here. Masks are bool,
**True = masked** (may not attend), as everywhere in the app.

Derived cells are keyed ``("mean", layer)`` (0-based layer) and ``("rollout", 0)``; their titles
end in "(derived)" so the grid, the enlarged map and the export can never pass them off as heads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from core.analysis import head_stats
from core.decoding.translate import Translation
from gui.state import view_kinds
from gui.state.view_data import StepMaps, ViewData, step_maps
from gui.state.view_kinds import view_at, view_title

DERIVED = "(derived)"
#: head_stats labels as the table shows them
LABEL_TEXT = {
    "previous": "previous token",
    "same": "same position",
    "next": "next token",
    "sink": "sink ([EOS] / punct.)",
    "monotone": "monotone (diagonal)",
    "broad": "broad",
    "mixed": "mixed",
}
#: the numeric HeadStats fields exported per head (max_entropy is one value per kind)
COLUMNS = ("layer", "head", "entropy", "max_entropy", "prev", "same", "next", "sink", "monotone")
NEXT_IMPOSSIBLE = "impossible"
ROLLOUT_TITLE = f"rollout {DERIVED}"


def mean_title(layer: int) -> str:
    """The grid title of layer ``layer``'s (0-based) mean over heads."""
    return f"L{layer + 1} mean {DERIVED}"


@dataclass
class DerivedMap:
    """One derived map as the enlarged heatmap and the alignment lines show it: ``matrix
    [rows, cols]``, ``mask`` (True = masked) and the axes, with a title that says it is derived."""

    key: tuple
    title: str
    matrix: np.ndarray
    mask: np.ndarray
    row_tokens: list[str]
    col_tokens: list[str]
    row_label: str
    col_label: str


def is_derived(key) -> bool:
    """True for a derived cell's key (``("mean", layer)`` or ``("rollout", 0)``)."""
    return isinstance(key, tuple) and len(key) == 2 and key[0] in ("mean", "rollout")


def layer_means(v: ViewData) -> np.ndarray:
    """``[L, rows, cols]`` float32: :func:`head_stats.mean_over_heads` of the view's weights."""
    return head_stats.mean_over_heads(torch.from_numpy(np.ascontiguousarray(v.weights))).numpy()


def derived_maps(result: Translation, k: int, v: ViewData) -> list[DerivedMap]:
    """The derived cells of view ``v`` at step ``k`` (those its :attr:`ViewKind.derived` names):
    one "L<i> mean (derived)" per layer and, for the encoder, "rollout (derived)" (Abnar & Zuidema
    2020, :func:`head_stats.rollout`: ``[S, S]``, rows = top-layer positions, columns = input
    tokens). Decoder and cross views get means only (the rollout is defined over the encoder's
    stacked self-attention)."""
    cells = view_kinds.get(v.kind).derived
    out = (
        [
            DerivedMap(("mean", li), mean_title(li), m, v.mask, v.row_tokens, v.col_tokens, v.row_label, v.col_label)
            for li, m in enumerate(layer_means(v))
        ]
        if "mean" in cells
        else []
    )
    if "rollout" in cells:
        roll = head_stats.rollout(result.maps.encoder_self).numpy()
        out.append(
            DerivedMap(
                ("rollout", 0), ROLLOUT_TITLE, roll, v.mask, v.row_tokens, v.col_tokens, "top-layer position", "input token"
            )
        )
    return out


def enlarged_title(kind: str, d: DerivedMap, result=None) -> str:
    """The enlarged map's title for a derived cell (``result``: the Translation it comes from,
    for :func:`gui.state.view_kinds.view_title`)."""
    name = view_title(result, kind)
    if d.key[0] == "rollout":
        return f"{name} — attention rollout over all layers {DERIVED}: head mean + identity, rows renormalized, multiplied"
    return f"{name} — layer {d.key[1] + 1}, mean over heads {DERIVED}"


def _core_kind(kind: str) -> str:
    """The attention kind ("enc", "dec", "cross") view ``kind`` shows. Raises ValueError for a view
    without heads (the masks)."""
    core = view_kinds.get(kind).core_kind
    if core is None:
        raise ValueError(f"the {kind} view has no attention heads")
    return core


def query_valid(step: StepMaps, kind: str) -> np.ndarray:
    """``[rows]`` bool: False where the query is a padding position (as :func:`head_stats.kind_masks`)
    in the maps of ``step`` (:func:`gui.state.view_data.step_maps`)."""
    return head_stats.kind_masks(step.maps, _core_kind(kind))[2].numpy().astype(bool)


def head_rows(step: StepMaps, kind: str) -> list[head_stats.HeadStats]:
    """The head table of one view kind at ``step`` (layer, head order; 1-based), from
    :func:`head_stats.head_table` on the maps the model computed up to that step; empty while the
    view has no query or no key (decoder and cross before the first step)."""
    maps, core_kind = step.maps, _core_kind(kind)
    if 0 in head_stats.kind_masks(maps, core_kind)[0].shape[-2:]:
        return []  # head_table cannot index an empty key axis (core: sink_keys is a float tensor then)
    return head_stats.head_table(maps, core_kind)


def label_text(h: head_stats.HeadStats) -> str:
    return LABEL_TEXT.get(h.label, h.label)


def table_arrays(rows: list[head_stats.HeadStats], prefix: str) -> dict[str, np.ndarray]:
    """The head table as columns: ``{prefix}layer``/``head`` (1-based int), the float measures
    (NaN where a measure does not apply, e.g. prev/same/next in cross-attention), ``label``,
    ``next_possible`` and ``note``."""
    out: dict[str, np.ndarray] = {}
    for field in COLUMNS:
        vals = [getattr(h, field) for h in rows]
        if field in ("layer", "head"):
            out[prefix + field] = np.array(vals, dtype=np.int64)
        else:
            out[prefix + field] = np.array([np.nan if x is None else x for x in vals], dtype=np.float64)
    out[prefix + "label"] = np.array([h.label for h in rows], dtype=str)
    out[prefix + "next_possible"] = np.array([h.next_possible for h in rows], dtype=bool)
    out[prefix + "note"] = np.array([h.note for h in rows], dtype=str)
    return out


def derived_arrays(result: Translation, k: int) -> dict[str, np.ndarray]:
    """Every derived view at step ``k`` for the .npz export: ``derived_mean_<view>``
    ``[L, rows, cols]`` for every attention view (encoder, decoder, cross), ``derived_rollout``
    ``[S, S]``, and the head table of each view as ``derived_heads_<view>_<column>`` (see
    :func:`table_arrays`)."""
    out: dict[str, np.ndarray] = {}
    step = step_maps(result, k)
    for kind in (view.name for view in view_kinds.attention_views()):
        v = view_at(result, k, kind, step)
        out[f"derived_mean_{kind}"] = layer_means(v)
        out.update(table_arrays(head_rows(step, kind), f"derived_heads_{kind}_"))
    out["derived_rollout"] = head_stats.rollout(result.maps.encoder_self).numpy()
    return out


__all__ = [
    "COLUMNS",
    "DERIVED",
    "DerivedMap",
    "LABEL_TEXT",
    "NEXT_IMPOSSIBLE",
    "derived_arrays",
    "derived_maps",
    "enlarged_title",
    "head_rows",
    "is_derived",
    "label_text",
    "layer_means",
    "query_valid",
    "table_arrays",
]
