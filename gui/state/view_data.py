"""What the heatmaps show at step k, computed from a plain core result (no Qt here).

At step k (0 ≤ k ≤ n) the decoder has consumed k inputs (BOS first): decoder maps have k
rows, exactly the rows the cached decoder produced so far. Rows are queries, columns keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # no torch for reading lecture files and registering view kinds
    from core.decoding.translate import Translation
    from core.transformer.maps import AttentionMaps

#: the Masks view's cells, in grid order
MASK_TITLES = (
    "decoder self mask given [T, T]",
    "cross-attention mask given [T, S]",
    "encoder key mask given [S]",
    "target key padding input [T]",
)
CAUSAL_OFF_TITLE = "Decoder self-attention, causal mask OFF"  # teacher forcing with Causal mask OFF


@dataclass
class MapData:
    """The fields of every drawn attention map: ``weights`` (float, ``[..., rows, cols]``; rows are
    queries, columns keys), the mask ``[rows, cols]`` (bool, True = masked), the row and column
    tokens and the axis labels."""

    weights: np.ndarray
    mask: np.ndarray
    row_tokens: list[str]
    col_tokens: list[str]
    row_label: str
    col_label: str


@dataclass
class ViewData(MapData):
    """A view ``kind``'s maps (``kind``: a name in :mod:`gui.state.view_kinds`): weights
    ``[L, H, rows, cols]``, the mask used ``[rows, cols]`` (True = masked), axis tokens and labels."""

    kind: str


def quote(token: str) -> str:
    """A token in angle quotes, so a token that is itself a quote mark stays readable: ⟨'⟩."""
    return f"⟨{token}⟩"


@dataclass(frozen=True)
class StepMaps:
    """A result's maps at decoder step ``k``, cut once: ``maps`` is ``result.maps.truncated(k)``
    (decoder rows ``[.., k, ..]``) and ``masks`` its masks given (:func:`masks_of`; True =
    masked). Every map drawn for one step is cut from one of these."""

    result: Translation
    k: int
    maps: AttentionMaps
    masks: dict[str, np.ndarray]


def step_maps(result: Translation, k: int) -> StepMaps:
    """:class:`StepMaps` of ``result`` at step ``k`` (the maps truncated once)."""
    m = result.maps.truncated(k)
    return StepMaps(result, k, m, masks_of(m))


def masks_at(result: Translation, k: int) -> dict[str, np.ndarray]:
    """The masks the model was **given** up to step k (bool, True = masked): :func:`masks_of` of
    ``result.maps.truncated(k)``."""
    return masks_of(result.maps.truncated(k))


def masks_of(m: AttentionMaps) -> dict[str, np.ndarray]:
    """The masks the model was **given** in ``m``, a result's maps cut to step k
    (``result.maps.truncated(k)``), as numpy (bool, True = masked), from ``m.applied`` (never
    rebuilt from token ids):

    decoder_self ``[T, T]`` (row t as given when query t was computed), decoder_self_given ``[T]``
    (False = that row ran with no mask), decoder_keys ``[T, T]`` (False = key not computed yet
    under the KV cache: neither masked nor visible), cross ``[T, S]``, cross_given ``[T]``,
    encoder ``[S]`` (the key mask given to the encoder; all False with encoder_given False when
    none was), and the key padding inputs src_key_padding ``[S]`` / tgt_key_padding ``[T]``.
    ``recorded`` is False when the result carries no applied masks (then all masks are False).
    """
    t, s = len(m.tgt_tokens), len(m.src_tokens)
    a = m.applied
    out: dict[str, np.ndarray] = {
        "src_key_padding": m.src_key_padding_mask.numpy(),
        "tgt_key_padding": m.tgt_key_padding_mask.numpy(),
        "recorded": np.asarray(a is not None),
    }
    if a is None:
        out.update(
            decoder_self=np.zeros((t, t), bool),
            decoder_self_given=np.zeros(t, bool),
            decoder_keys=np.tril(np.ones((t, t), bool)),
            cross=np.zeros((t, s), bool),
            cross_given=np.zeros(t, bool),
            encoder=np.zeros(s, bool),
            encoder_given=np.asarray(False),
        )
        return out
    out.update(
        decoder_self=a.decoder_self.numpy(),
        decoder_self_given=a.decoder_self_given.numpy(),
        decoder_keys=a.decoder_keys.numpy(),
        cross=a.cross.numpy(),
        cross_given=a.cross_given.numpy(),
        encoder=np.zeros(s, bool) if a.encoder is None else a.encoder[0].numpy(),
        encoder_given=np.asarray(a.encoder is not None),
    )
    return out


def _masks_used(step: StepMaps):
    """The masks of the three attentions at ``step`` as the maps are drawn with them (bool,
    True = masked): encoder ``[S, S]``, decoder ``[T, T]`` (also True where a key was not
    computed yet under the KV cache) and cross ``[T, S]``."""
    m, masks = step.maps, step.masks
    if m.applied is None:  # a result without recorded masks: the masks as the maps define them
        return m.encoder_mask.numpy(), m.decoder_self_mask.numpy(), m.cross_mask.numpy()
    s = len(m.src_tokens)
    enc_mask = np.broadcast_to(masks["encoder"][None, :], (s, s))
    return enc_mask, masks["decoder_self"] | ~masks["decoder_keys"], masks["cross"]


def encoder_view(step: StepMaps) -> MapData:
    """Encoder self-attention ``[L, H, S, S]`` with its key mask (the same at every step)."""
    m = step.maps
    src = m.src_tokens
    return MapData(m.encoder_self.numpy(), _masks_used(step)[0], src, src, "source query", "source key")


def decoder_view(step: StepMaps) -> MapData:
    """Decoder self-attention at step ``k``: ``[L, H, k, k]`` (KV cache: a key not computed yet
    is masked); for teacher forcing without the causal mask ``[L, H, k, T]``, unmasked."""
    m, result, k = step.maps, step.result, step.k
    tgt = m.tgt_tokens
    if not getattr(result, "causal", True):
        # teacher forcing without the causal mask: query row t saw all T keys, future included
        full = result.maps
        t_all = full.decoder_self.shape[-1]
        return MapData(
            full.decoder_self[:, :, :k].numpy(),
            np.zeros((k, t_all), dtype=bool),
            tgt,
            list(full.tgt_tokens),
            "target query",
            "target key (all T)",
        )
    return MapData(m.decoder_self.numpy(), _masks_used(step)[1], tgt, tgt, "target query", "target key")


def cross_view(step: StepMaps) -> MapData:
    """Cross-attention (decoder → encoder) at step ``k``: ``[L, H, k, S]`` with the mask given."""
    m = step.maps
    return MapData(m.cross.numpy(), _masks_used(step)[2], m.tgt_tokens, m.src_tokens, "target query", "source key")


def mask_state(mask: np.ndarray, present: np.ndarray | None = None) -> np.ndarray:
    """Float image of a mask: 1 = masked (True), 0 = may attend, NaN = key not computed yet."""
    img = np.asarray(mask, dtype=np.float32).copy()
    if present is not None:
        img[~present] = np.nan
    return img


def mask_cells(step: StepMaps) -> list[tuple[str, np.ndarray, list[str], list[str]]]:
    """The masks given at ``step`` as ``(title, image [rows, cols], row tokens, col tokens)``; the
    image is :func:`mask_state` (1 masked, 0 may attend, NaN key not computed yet)."""
    m, masks = step.maps, step.masks
    src, tgt = m.src_tokens, m.tgt_tokens
    images = [
        mask_state(masks["decoder_self"], masks["decoder_keys"]),
        mask_state(masks["cross"]),
        mask_state(masks["encoder"][None, :]),
        mask_state(masks["tgt_key_padding"][None, :]),
    ]
    axes = [(tgt, tgt), (tgt, src), (["enc"], src), (["tgt"], tgt)]
    return [(title, x, rows, cols) for title, x, (rows, cols) in zip(MASK_TITLES, images, axes)]


def step_text(result: Translation, k: int) -> str:
    """Human-readable description of step k."""
    n = len(result.steps)
    if k == 0:
        return f"step 0 / {n}: source encoded; decoder input so far: [BOS]"
    st = result.steps[k - 1]
    given = result.maps.tgt_tokens[k - 1] if k - 1 < len(result.maps.tgt_tokens) else "?"
    verb = "reference token" if result.mode == "teacher_forced" else "chose"
    return f"step {k} / {n}: input {quote(given)} → {verb} {quote(st.token)}"
