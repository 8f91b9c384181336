"""Attention masks, all boolean with **True = masked (may not attend)**, as in torch.nn.Transformer.

Every mask is built on the device of its input tensor; nothing here knows a global device.
"""

from __future__ import annotations

import torch
from torch import Tensor


def key_padding_mask(ids: Tensor, pad_id: int) -> Tensor:
    """Key padding mask for token ids.

    Args:
        ids: ``[B, S]`` token ids (source or target).
        pad_id: the padding token id.
    Returns:
        ``[B, S]`` bool, True where ``ids == pad_id`` (these keys are masked).
    """
    return ids.eq(pad_id)


def causal_mask(size: int, device: torch.device | str | None = None) -> Tensor:
    """Causal ("subsequent") mask of the decoder self-attention (paper §3.2.3).

    Returns:
        ``[T, T]`` bool, True strictly above the diagonal: query t may not see keys > t.
    """
    return torch.ones(size, size, dtype=torch.bool, device=device).triu(1)


def decoder_self_mask(tgt_key_padding: Tensor | None, causal: Tensor) -> Tensor:
    """Combined decoder self-attention mask: causal OR target key padding.

    Args:
        tgt_key_padding: ``[B, T]`` bool (True = pad key) or None.
        causal: ``[T_q, T_k]`` bool from :func:`causal_mask` (T_q may be a suffix of T_k rows).
    Returns:
        ``[B, 1, T_q, T_k]`` bool (True = masked), broadcast over heads.
    """
    mask = causal[None, None]
    if tgt_key_padding is not None:
        mask = mask | tgt_key_padding[:, None, None, :]
    return mask


def cross_mask(src_key_padding: Tensor | None) -> Tensor | None:
    """Key padding mask shaped for attention over the source: ``[B, S] -> [B, 1, 1, S]``.

    Masks key *columns*, never query rows (a classic tutorial bug masked rows).
    """
    if src_key_padding is None:
        return None
    return src_key_padding[:, None, None, :]
