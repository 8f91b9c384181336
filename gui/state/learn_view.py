"""What the Learn tab draws from one snapshot of a live toy-task run (no Qt): the layer × head grid
of the probe pair's maps, the enlarged map, the curves over the snapshots and a caption.

Maps come from :class:`core.training.live_probe.ProbeMaps` of the fixed probe pair: rows are
queries, columns keys; for cross-attention the rows are the target (decoder) positions and the
columns the source positions. Masks are bool, **True = masked** (may not attend): the decoder's
causal mask when the run trains with it; the probe pair has no padding, so the other maps have none.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.training.live_probe import ProbeMaps
from core.training.live_session import Snapshot
from gui.state.view_spec import Cell

#: map kind -> (title, row label, column label)
KINDS = {
    "cross": ("cross-attention", "target query", "source key"),
    "decoder": ("decoder self-attention (causal mask hatched)", "target query", "target key"),
    "encoder": ("encoder self-attention", "source query", "source key"),
}


@dataclass(frozen=True)
class LearnMap:
    """One kind of map of the probe pair: ``weights [L, H, rows, cols]`` (rows sum to 1), ``mask
    [rows, cols]`` bool (True = masked) or None, the row and column tokens and axis labels."""

    kind: str
    weights: np.ndarray
    mask: np.ndarray | None
    row_tokens: list[str]
    col_tokens: list[str]
    row_label: str
    col_label: str


def learn_map(maps: ProbeMaps, kind: str) -> LearnMap:
    """``kind`` ("cross", "decoder", "encoder") of ``maps``. Raises ValueError for another kind."""
    if kind not in KINDS:
        raise ValueError(f"unknown map kind {kind!r}; choose one of {', '.join(KINDS)}")
    _, rows, cols = KINDS[kind]
    if kind == "cross":
        return LearnMap(kind, maps.cross, None, maps.tgt_tokens, maps.src_tokens, rows, cols)
    if kind == "decoder":
        mask = maps.decoder_self_mask if maps.decoder_self_mask.any() else None
        return LearnMap(kind, maps.decoder_self, mask, maps.tgt_tokens, maps.tgt_tokens, rows, cols)
    return LearnMap(kind, maps.encoder_self, None, maps.src_tokens, maps.src_tokens, rows, cols)


def grid_cells(m: LearnMap) -> list[Cell]:
    """One :class:`Cell` per (layer, head), layers down and heads across, titled "L1 H1" (1-based),
    keyed ``(layer, head)`` 0-based; every cell shares ``m.mask``."""
    n_layers, n_heads = m.weights.shape[:2]
    return [Cell(f"L{i + 1} H{j + 1}", m.weights[i, j], m.mask, (i, j)) for i in range(n_layers) for j in range(n_heads)]


def enlarged_key(snapshot: Snapshot, kind: str, chosen: tuple[int, int] | None, follow_best: bool) -> tuple[int, int]:
    """The (layer, head) to enlarge, 0-based: the snapshot's best cross-attention head when
    ``follow_best`` and the task has a known alignment (cross-attention only), else ``chosen``
    clamped to the model, else the last layer's first head."""
    ev = snapshot.evaluation
    n_layers, n_heads = ev.maps.cross.shape[:2]
    if follow_best and kind == "cross" and ev.best_head is not None:
        return (ev.best_head[0], ev.best_head[1])
    if chosen is None:
        return (n_layers - 1, 0)
    return (min(chosen[0], n_layers - 1), min(chosen[1], n_heads - 1))


def map_title(snapshot: Snapshot, m: LearnMap, key: tuple[int, int]) -> str:
    """The enlarged map's title: kind, layer and head (1-based), the update it shows, and for
    cross-attention with a known alignment that head's agreement with it."""
    ev = snapshot.evaluation
    text = f"{KINDS[m.kind][0]}, layer {key[0] + 1} head {key[1] + 1}, update {snapshot.updates}"
    if m.kind == "cross" and ev.head_agreement is not None:
        text += f" · agrees with the known alignment on {ev.head_agreement[key]:.0%} of probe positions"
    return text


def _pct(value: float | None) -> str:
    return "–" if value is None or not np.isfinite(value) else f"{value:.0%}"


def _num(value: float) -> str:
    return "–" if not np.isfinite(value) else f"{value:.3f}"


def caption(snapshot: Snapshot, what: str = "") -> str:
    """One line (HTML-free) for the snapshot: the task, update and training time (s), held-out
    loss (nats/token), exact-match accuracy on the probe set, the best head's alignment, and the
    greedy output of the probe pair drawn."""
    ev = snapshot.evaluation
    best = "" if ev.best_head is None else f" (best head L{ev.best_head[0] + 1} H{ev.best_head[1] + 1})"
    src = "".join(t for t in ev.maps.src_tokens if not t.startswith("["))
    out = ev.outputs[0] if ev.outputs else ""
    parts = [
        what,
        f"update {snapshot.updates} · {snapshot.wall_s:.1f} s of training",
        f"held-out loss {_num(ev.heldout_nll)} nats/token",
        f"exact {_pct(ev.accuracy)}",
        f"alignment {_pct(ev.alignment)}{best}" if ev.alignment is not None else "no known alignment",
        f"probe {src} → {out or '(nothing)'}",
    ]
    return " · ".join(p for p in parts if p)


SERIES = ("train_loss", "heldout_nll", "accuracy", "alignment")  # the fields of Curves drawn


@dataclass(frozen=True)
class Curves:
    """Per snapshot, in order: ``updates`` and the series drawn (NaN where there is no value:
    the training loss before any update, the alignment of a task without a known alignment)."""

    updates: np.ndarray
    train_loss: np.ndarray
    heldout_nll: np.ndarray
    accuracy: np.ndarray
    alignment: np.ndarray


def curves(snapshots: list[Snapshot]) -> Curves:
    """The curves over ``snapshots`` (losses in nats/token, accuracy and alignment 0-1)."""
    evs = [s.evaluation for s in snapshots]

    def col(values) -> np.ndarray:
        return np.array([np.nan if v is None else v for v in values], dtype=np.float64)

    return Curves(
        updates=np.array([s.updates for s in snapshots], dtype=np.float64),
        train_loss=col(e.train_loss for e in evs),
        heldout_nll=col(e.heldout_nll for e in evs),
        accuracy=col(e.accuracy for e in evs),
        alignment=col(e.alignment for e in evs),
    )


__all__ = ["KINDS", "SERIES", "Curves", "LearnMap", "caption", "curves", "enlarged_key", "grid_cells", "learn_map", "map_title"]
