"""What the heatmaps show at step k, computed from a plain core result (no Qt here).

At step k (0 ≤ k ≤ n) the decoder has consumed k inputs (BOS first): decoder maps have k
rows, exactly the rows the cached decoder produced so far. Rows are queries, columns keys.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.inference.translate import Translation

KINDS = ("encoder", "decoder", "cross", "masks")
KIND_TITLES = {
    "encoder": "Encoder self-attention",
    "decoder": "Decoder masked self-attention",
    "cross": "Cross-attention (decoder → encoder)",
    "masks": "Masks",
}


@dataclass
class ViewData:
    """weights ``[L, H, rows, cols]`` (or ``[n_masks, 1, rows, cols]`` for masks), the mask used
    ``[rows, cols]`` (True = masked), axis tokens and labels."""

    kind: str
    weights: np.ndarray
    mask: np.ndarray
    row_tokens: list[str]
    col_tokens: list[str]
    row_label: str
    col_label: str


def masks_at(result: Translation, k: int) -> dict[str, np.ndarray]:
    """The masks the model used at step k (bool, True = masked)."""
    m = result.maps.truncated(k)
    causal = m.causal_mask.numpy()
    tgt = m.tgt_key_padding_mask.numpy()
    return {
        "causal": causal,
        "src_key_padding": m.src_key_padding_mask.numpy(),
        "tgt_key_padding": tgt,
        "decoder_self": causal | tgt[None, :],
    }


def view_at(result: Translation, k: int, kind: str) -> ViewData:
    """Heatmap data of ``kind`` at step ``k``. Raises ValueError for an unknown kind."""
    if kind not in KINDS:
        raise ValueError(f"unknown view {kind!r}; choose one of {', '.join(KINDS)}")
    m = result.maps.truncated(k)
    src, tgt = m.src_tokens, m.tgt_tokens
    masks = masks_at(result, k)
    if kind == "encoder":
        return ViewData(kind, m.encoder_self.numpy(), m.encoder_mask.numpy(), src, src, "source query", "source key")
    if kind == "decoder":
        return ViewData(kind, m.decoder_self.numpy(), masks["decoder_self"], tgt, tgt, "target query", "target key")
    if kind == "cross":
        return ViewData(kind, m.cross.numpy(), m.cross_mask.numpy(), tgt, src, "target query", "source key")
    raise ValueError("the masks view has its own cells: use mask_cells()")


def mask_cells(result: Translation, k: int) -> list[tuple[str, np.ndarray, list[str], list[str]]]:
    """The masks at step k as ``(title, mask [rows, cols] bool, row tokens, col tokens)``."""
    m = result.maps.truncated(k)
    masks = masks_at(result, k)
    src, tgt = m.src_tokens, m.tgt_tokens
    return [
        ("causal mask [T, T]", masks["causal"], tgt, tgt),
        ("decoder self mask = causal ∨ tgt pad", masks["decoder_self"], tgt, tgt),
        ("source key padding [S]", masks["src_key_padding"][None, :], ["src"], src),
        ("target key padding [T]", masks["tgt_key_padding"][None, :], ["tgt"], tgt),
    ]


def step_text(result: Translation, k: int) -> str:
    """Human-readable description of step k."""
    n = len(result.steps)
    if k == 0:
        return f"step 0 / {n}: source encoded; decoder input so far: [BOS]"
    st = result.steps[k - 1]
    given = result.maps.tgt_tokens[k - 1] if k - 1 < len(result.maps.tgt_tokens) else "?"
    verb = "reference token" if result.mode == "teacher_forced" else "chose"
    return f"step {k} / {n}: input '{given}' → {verb} '{st.token}'"
