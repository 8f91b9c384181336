"""The attention a model computed for one sentence, and the masks that shaped it."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor


@dataclass
class AttentionMaps:
    """Attention of one sentence pair (CPU float32 tensors; masks bool, **True = masked**).

    encoder_self: ``[L, H, S, S]`` rows = source queries, columns = source keys.
    decoder_self: ``[L, H, T, T]`` rows = target queries, columns = target keys.
    cross:        ``[L, H, T, S]`` rows = target queries, columns = source keys.
    src_key_padding_mask: ``[S]``; tgt_key_padding_mask: ``[T]``; causal_mask: ``[T, T]``.
    src_tokens: the S tokens the encoder saw (pads included); tgt_tokens: the T decoder
    input tokens, starting with BOS.
    """

    encoder_self: Tensor
    decoder_self: Tensor
    cross: Tensor
    src_key_padding_mask: Tensor
    tgt_key_padding_mask: Tensor
    causal_mask: Tensor
    src_tokens: list[str] = field(default_factory=list)
    tgt_tokens: list[str] = field(default_factory=list)

    @property
    def decoder_self_mask(self) -> Tensor:
        """Combined decoder self-attention mask ``[T, T]``: causal OR target key padding."""
        return self.causal_mask | self.tgt_key_padding_mask[None, :]

    @property
    def cross_mask(self) -> Tensor:
        """Cross-attention mask ``[T, S]``: source key padding broadcast over queries."""
        return self.src_key_padding_mask[None, :].expand(self.cross.shape[-2], -1)

    @property
    def encoder_mask(self) -> Tensor:
        """Encoder self-attention mask ``[S, S]``: source key padding broadcast over queries."""
        s = self.src_key_padding_mask.shape[0]
        return self.src_key_padding_mask[None, :].expand(s, -1)

    def truncated(self, t: int) -> AttentionMaps:
        """The decoder maps as they were after ``t`` decoder input positions (for stepping)."""
        return AttentionMaps(
            self.encoder_self,
            self.decoder_self[:, :, :t, :t],
            self.cross[:, :, :t],
            self.src_key_padding_mask,
            self.tgt_key_padding_mask[:t],
            self.causal_mask[:t, :t],
            list(self.src_tokens),
            list(self.tgt_tokens[:t]),
        )

    def to_json(self) -> dict:
        """Nested lists, for ``translate --json``; float weights rounded to 6 decimals."""

        def r(x: Tensor) -> list:
            return torch.round(x.float(), decimals=6).tolist()

        return {
            "encoder_self": r(self.encoder_self),
            "decoder_self": r(self.decoder_self),
            "cross": r(self.cross),
        }
