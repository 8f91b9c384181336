"""Summaries of the attention a model computed: mean over heads, attention rollout, per-head
entropy and a "where does this head look" label, as a sortable table of heads.

Everything works on the tensors of :class:`~core.transformer.maps.AttentionMaps` (``[L, H, T_q, T_k]``)
and the masks the model was given (bool, **True = masked**, as in ``torch.nn.Transformer``).
Nothing here imports Qt.

Row conventions: a *valid query row* is a row whose query is not a padding position and that
could see at least one key. Padded query rows (source or target key padding applied to the query
axis) and rows with every key masked are left out of every mean below; they are never counted as
zero-entropy rows.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import Tensor

from core.tokenizers.bpe import EOS
from core.transformer.kinds import KINDS
from core.transformer.maps import AttentionMaps

#: A head is labelled with a position pattern (previous / same / next token, sink) when that
#: pattern holds at least this share of its attention, averaged over valid query rows.
POSITION_THRESHOLD = 0.5
#: "monotone" (diagonal alignment): the row argmax never moves back in at least this share of
#: consecutive valid rows, and it visits at least MONOTONE_MIN_DISTINCT distinct keys (and at
#: least half as many keys as there are valid rows), so a constant argmax (a sink) does not count.
MONOTONE_THRESHOLD = 0.8
MONOTONE_MIN_DISTINCT = 3
#: "broad": mean entropy at least this share of the mean maximum entropy ln(#visible keys).
BROAD_THRESHOLD = 0.8


def mean_over_heads(weights: Tensor) -> Tensor:
    """Mean attention over heads: ``[L, H, T_q, T_k]`` → ``[L, T_q, T_k]`` float32 on the CPU (rows
    still sum to 1 where every head's row does; masked cells stay exactly 0).

    Summed by numpy, one float32 add per head in head order, then divided by H. The GUI calls this
    on every redraw: torch would hand a tensor of a 6 × 8-head, 40-token view to its thread pool,
    whose wake-up cost 8 ms on a busy two-core machine (numpy: 0.02 ms). The result equals
    ``weights.mean(1)`` to within 1 float32 rounding step (the order of the adds may differ).

    Raises:
        ValueError: ``weights`` is not 4-dimensional.
    """
    if weights.dim() != 4:
        raise ValueError(f"expected [L, H, T_q, T_k] attention, got shape {tuple(weights.shape)}")
    w = weights.detach().to("cpu", torch.float32).numpy()
    return torch.from_numpy(w.mean(axis=1, dtype=np.float32))


def rollout(encoder_self: Tensor) -> Tensor:
    """Attention rollout over the encoder layers (Abnar & Zuidema 2020, "Quantifying Attention
    Flow in Transformers", §3).

    Per layer ``l`` the head-mean ``A_l [S, S]`` gets the identity added for the residual
    connection and its rows renormalized, ``Â_l = (A_l + I) / rowsum``; the rollout is the
    product ``Â_L · … · Â_1``, whose row i says how much of the top layer's position i flows from
    each input token. Row sums are 1. A padding key column is exactly 0 for every real query
    (no layer lets a real query attend to a pad, and the identity only maps a pad to itself).

    Args:
        encoder_self: ``[L, H, S, S]`` encoder self-attention weights.
    Returns:
        ``[S, S]`` float32 (rows = top-layer positions, columns = input tokens).
    Raises:
        ValueError: not a square ``[L, H, S, S]`` tensor.
    """
    if encoder_self.dim() != 4 or encoder_self.shape[-1] != encoder_self.shape[-2]:
        raise ValueError(f"rollout needs [L, H, S, S] self-attention, got shape {tuple(encoder_self.shape)}")
    a = mean_over_heads(encoder_self).double()
    eye = torch.eye(a.shape[-1], dtype=a.dtype)
    out = eye
    for layer in a:
        r = layer + eye
        out = (r / r.sum(dim=-1, keepdim=True)) @ out
    return out.float()


def kind_masks(maps: AttentionMaps, kind: str) -> tuple[Tensor, Tensor, Tensor, list[str]]:
    """For one attention kind (``enc`` / ``dec`` / ``cross``): ``(weights [L, H, Q, K],
    visible [Q, K] bool (True = key existed and was not masked for that query), query_valid [Q]
    bool (False = padding query), key tokens)``.

    ``visible`` uses the masks the model was given (``maps.applied``) where recorded, so keys
    not computed yet during cached decoding count as not visible; otherwise the combined masks
    of ``maps`` (causal OR key padding). Raises ValueError for an unknown kind.
    """
    if kind == "enc":
        s = maps.encoder_self.shape[-1]
        return (maps.encoder_self, ~maps.encoder_mask[:s, :s], ~maps.src_key_padding_mask, list(maps.src_tokens))
    if kind == "dec":
        w = maps.decoder_self
        t = w.shape[-1]
        if maps.applied is not None and maps.applied.decoder_self.shape[0] == t:
            vis = maps.applied.decoder_keys & ~maps.applied.decoder_self
        else:
            vis = ~maps.decoder_self_mask
        return w, vis, ~maps.tgt_key_padding_mask[:t], list(maps.tgt_tokens)
    if kind == "cross":
        w = maps.cross
        return w, ~maps.cross_mask, ~maps.tgt_key_padding_mask[: w.shape[-2]], list(maps.src_tokens)
    raise ValueError(f"unknown attention kind {kind!r}; expected one of {', '.join(KINDS)}")


def head_entropy(weights: Tensor, visible: Tensor, query_valid: Tensor) -> Tensor:
    """Entropy of every head's attention rows in nats, averaged over valid query rows.

    ``H(row) = -Σ_k p_k ln p_k`` over visible keys (a 0 weight contributes 0). Rows whose query is
    padding (``query_valid`` False) or that see no key are left out of the mean.

    Args:
        weights: ``[L, H, Q, K]``; visible: ``[Q, K]`` bool (True = may attend);
        query_valid: ``[Q]`` bool.
    Returns:
        ``[L, H]`` float32 nats; 0 for a head with no valid row.
    """
    rows = _rows(visible, query_valid)
    p = weights.double() * visible.double()
    ent = -(p * torch.where(p > 0, p.log(), torch.zeros_like(p))).sum(-1)  # [L, H, Q]
    return _row_mean(ent, rows).float()


@dataclass
class HeadStats:
    """One head's summary (a row of the sortable heads table). layer, head: 1-based.

    entropy: mean row entropy (nats); max_entropy: mean ln(#visible keys) over the same rows.
    prev / same / next: mean attention on key i-1 / i / i+1 for query i (self-attention only;
    None for cross-attention). next_possible: False where no query may see its next key (decoder
    self-attention under the causal mask, or cached decoding): then ``next`` is exactly 0.
    sink: mean attention on [EOS] and punctuation keys. monotone: share of consecutive valid rows
    whose argmax key does not move back. label: previous / same / next / sink / monotone / broad /
    mixed (thresholds: module constants). note: a human-readable remark (e.g. the causal mask).
    """

    kind: str
    layer: int
    head: int
    entropy: float
    max_entropy: float
    prev: float | None
    same: float | None
    next: float | None
    next_possible: bool
    sink: float
    monotone: float
    label: str
    note: str = ""

    def to_json(self) -> dict:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def is_sink_token(token: str) -> bool:
    """[EOS] or a token made only of punctuation (after a leading ▁/Ġ/## word marker)."""
    if token == EOS:
        return True
    t = token.lstrip("▁Ġ").removeprefix("##")
    return bool(t) and all(unicodedata.category(ch).startswith("P") for ch in t)


def head_table(maps: AttentionMaps, kind: str) -> list[HeadStats]:
    """Every head of one attention kind with its entropy, position masses and label, in layer,
    head order (sort with :func:`sort_heads`); empty while there is no query or no key yet (the
    decoder and cross-attention before the first step). Raises ValueError for an unknown kind."""
    weights, visible, query_valid, key_tokens = kind_masks(maps, kind)
    w = weights.double() * visible.double()
    n_l, n_h, q, k = w.shape
    if q == 0 or k == 0:
        return []
    rows = _rows(visible, query_valid)
    ent = head_entropy(weights, visible, query_valid)
    n_vis = visible.sum(-1).clamp(min=1).double().log()
    max_ent = float(n_vis[rows].mean()) if rows.any() else 0.0
    sink_keys = torch.tensor([is_sink_token(t) for t in key_tokens[:k]] + [False] * (k - len(key_tokens[:k])), dtype=torch.bool)
    sink = _row_mean(w[..., sink_keys].sum(-1), rows)
    self_kind = kind != "cross"
    offsets = {}
    if self_kind:
        for name, off in (("prev", -1), ("same", 0), ("next", 1)):
            offsets[name] = _row_mean(_diag(w, off), rows)
    next_possible = self_kind and bool(_diag(visible[None, None].double(), 1)[0, 0][rows].any())
    mono = _monotone(w, rows)
    out = []
    for li in range(n_l):
        for hi in range(n_h):
            masses = {n: float(v[li, hi]) for n, v in offsets.items()} | {"sink": float(sink[li, hi])}
            share, distinct = mono[li][hi]
            label = _label(masses, share, distinct, int(rows.sum()), float(ent[li, hi]), max_ent)
            note = ""
            if kind == "dec" and not next_possible:
                note = "next token impossible: the causal mask hides it"
            out.append(
                HeadStats(
                    kind,
                    li + 1,
                    hi + 1,
                    float(ent[li, hi]),
                    max_ent,
                    masses.get("prev"),
                    masses.get("same"),
                    masses.get("next"),
                    next_possible,
                    masses["sink"],
                    share,
                    label,
                    note,
                )
            )
    return out


#: The column headers :func:`format_table` prints that are not field names themselves.
COLUMN_ALIASES = {"l": "layer", "h": "head", "max": "max_entropy", "mono": "monotone"}
SORT_COLUMNS = ("kind", "layer", "head", "entropy", "max_entropy", "prev", "same", "next", "sink", "monotone", "label")


def sort_column(key: str) -> str:
    """The :class:`HeadStats` field a sort key names: a field name or a header of
    :func:`format_table` (``L``, ``H``, ``max``, ``mono``; case-insensitive). Raises ValueError
    (naming the accepted columns) for anything else."""
    k = key.strip().lower()
    k = COLUMN_ALIASES.get(k, k)
    if k not in SORT_COLUMNS:
        raise ValueError(
            f"unknown column {key!r}; one of {', '.join(SORT_COLUMNS)} (or the table headers {', '.join(COLUMN_ALIASES)})"
        )
    return k


def sort_heads(rows: list[HeadStats], key: str = "entropy", descending: bool = False) -> list[HeadStats]:
    """The table sorted by one column (a :class:`HeadStats` field or a printed header, see
    :func:`sort_column`); None sorts last. Raises ValueError for an unknown column."""
    key = sort_column(key)
    present = [r for r in rows if getattr(r, key) is not None]
    missing = [r for r in rows if getattr(r, key) is None]
    return sorted(present, key=lambda r: getattr(r, key), reverse=descending) + missing


def derived_json(maps: AttentionMaps, sort: str = "entropy", descending: bool = False) -> dict:
    """The derived views as JSON: per kind the sorted head table, the mean over heads per layer
    (``[L, T_q, T_k]``) and the encoder rollout ``[S, S]`` (weights rounded to 6 decimals).
    Raises ValueError for an unknown sort column."""

    def r(x: Tensor) -> list:
        return torch.round(x.double(), decimals=6).tolist()

    sort = sort_column(sort)
    return {
        "sort": sort,
        "descending": descending,
        "heads": {k: [h.to_json() for h in sort_heads(head_table(maps, k), sort, descending)] for k in KINDS},
        "mean_over_heads": {k: r(mean_over_heads(kind_masks(maps, k)[0])) for k in KINDS},
        "rollout": r(rollout(maps.encoder_self)),
        "thresholds": {
            "position": POSITION_THRESHOLD,
            "monotone": MONOTONE_THRESHOLD,
            "monotone_min_distinct": MONOTONE_MIN_DISTINCT,
            "broad": BROAD_THRESHOLD,
        },
    }


def format_table(rows: list[HeadStats]) -> str:
    """A plain-text table of heads (one line per head; '-' where a measure does not apply)."""

    def f(x: float | None) -> str:
        return "    -" if x is None else f"{x:5.2f}"

    lines = ["kind  L  H  entropy  max   prev  same  next  sink  mono  label"]
    for h in rows:
        lines.append(
            f"{h.kind:<5} {h.layer:>2} {h.head:>2}  {h.entropy:6.3f} {h.max_entropy:5.2f}  "
            f"{f(h.prev)} {f(h.same)} {f(h.next)} {f(h.sink)} {f(h.monotone)}  {h.label}" + (f"  ({h.note})" if h.note else "")
        )
    return "\n".join(lines)


def _rows(visible: Tensor, query_valid: Tensor) -> Tensor:
    """[Q] bool: valid query rows that see at least one key."""
    return query_valid.bool() & visible.any(-1)


def _row_mean(x: Tensor, rows: Tensor) -> Tensor:
    """Mean of ``x [L, H, Q]`` over the rows where ``rows [Q]``; 0 where there are none."""
    n = int(rows.sum())
    if n == 0:
        return torch.zeros(x.shape[:2], dtype=x.dtype)
    return x[..., rows].sum(-1) / n


def _diag(w: Tensor, off: int) -> Tensor:
    """``w [L, H, Q, K]`` → ``[L, H, Q]``: the weight on key i+off for query i (0 off the edge)."""
    q, k = w.shape[-2:]
    out = torch.zeros(w.shape[:3], dtype=w.dtype)
    for i in range(q):
        j = i + off
        if 0 <= j < k:
            out[..., i] = w[..., i, j]
    return out


def _monotone(w: Tensor, rows: Tensor) -> list[list[tuple[float, int]]]:
    """Per head (share of consecutive valid rows whose argmax does not move back, #distinct argmax)."""
    idx = rows.nonzero().flatten()
    out = []
    for li in range(w.shape[0]):
        per = []
        for hi in range(w.shape[1]):
            am = w[li, hi, idx].argmax(-1) if len(idx) else torch.zeros(0, dtype=torch.long)
            steps = len(am) - 1
            share = float((am[1:] >= am[:-1]).double().mean()) if steps > 0 else 0.0
            per.append((share, len(set(am.tolist()))))
        out.append(per)
    return out


def _label(masses: dict[str, float], mono: float, distinct: int, n_rows: int, ent: float, max_ent: float) -> str:
    best = max(masses, key=lambda name: masses[name])
    if masses[best] >= POSITION_THRESHOLD:
        return {"prev": "previous", "same": "same", "next": "next", "sink": "sink"}[best]
    if mono >= MONOTONE_THRESHOLD and distinct >= max(MONOTONE_MIN_DISTINCT, math.ceil(n_rows / 2)):
        return "monotone"
    if max_ent > 0 and ent >= BROAD_THRESHOLD * max_ent:
        return "broad"
    return "mixed"


__all__ = [
    "mean_over_heads",
    "rollout",
    "head_entropy",
    "head_table",
    "sort_heads",
    "HeadStats",
    "kind_masks",
    "derived_json",
    "format_table",
    "is_sink_token",
    "KINDS",
    "POSITION_THRESHOLD",
    "MONOTONE_THRESHOLD",
    "BROAD_THRESHOLD",
]
