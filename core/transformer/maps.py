"""The attention a model computed for one sentence, and the masks that shaped it."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor


@dataclass
class AppliedMasks:
    """The masks the model was **given** while computing the maps (bool, True = masked), one
    query row at a time, as passed to attention: nothing here is rebuilt from token ids.

    encoder:            ``[S, S]`` the encoder self-attention mask, or None (ran unmasked).
    decoder_self:       ``[T, T]`` row t = the mask given when decoder query t was computed
                        (all False where ``decoder_self_given[t]`` is False).
    decoder_self_given: ``[T]`` False where row t was computed with no mask at all (a cached
                        step with one new query: every key that exists may be seen).
    decoder_keys:       ``[T, T]`` True where key j existed when row t was computed (cached
                        decoding: j ≤ t; one parallel pass: every j). A key that did not exist
                        is neither masked nor visible: it was never part of the attention.
    cross:              ``[T, S]`` the cross-attention mask of row t; ``cross_given``: ``[T]``.
    """

    encoder: Tensor | None
    decoder_self: Tensor
    decoder_self_given: Tensor
    decoder_keys: Tensor
    cross: Tensor
    cross_given: Tensor

    def truncated(self, t: int) -> AppliedMasks:
        """The first ``t`` decoder rows (and keys)."""
        return AppliedMasks(
            self.encoder,
            self.decoder_self[:t, :t],
            self.decoder_self_given[:t],
            self.decoder_keys[:t, :t],
            self.cross[:t],
            self.cross_given[:t],
        )

    def to_json(self) -> dict:
        """Nested lists of bools (True = masked); ``encoder`` is None when no mask was given."""
        return {
            "encoder": None if self.encoder is None else self.encoder[0].tolist(),
            "decoder_self": self.decoder_self.tolist(),
            "decoder_self_given": self.decoder_self_given.tolist(),
            "decoder_keys": self.decoder_keys.tolist(),
            "cross": self.cross.tolist(),
            "cross_given": self.cross_given.tolist(),
        }

    @staticmethod
    def from_rows(
        encoder_mask: Tensor | None, s: int, self_rows: list[Tensor | None], cross_rows: list[Tensor | None]
    ) -> AppliedMasks:
        """From cached decoding: per step t the self mask row given (``[t + 1]`` bool, or None)
        and the cross mask row (``[S]`` bool, or None); ``encoder_mask`` ``[S]`` (key padding as
        given to the encoder, broadcast over queries) or None."""
        t = len(self_rows)
        dec = torch.zeros(t, t, dtype=torch.bool)
        keys = torch.zeros(t, t, dtype=torch.bool)
        cross = torch.zeros(t, s, dtype=torch.bool)
        for k, (row, crow) in enumerate(zip(self_rows, cross_rows)):
            keys[k, : k + 1] = True
            if row is not None:
                dec[k, : row.numel()] = row.cpu()
            if crow is not None:
                cross[k] = crow.cpu()
        enc = None if encoder_mask is None else encoder_mask.cpu()[None, :].expand(s, s).clone()
        return AppliedMasks(
            enc,
            dec,
            torch.tensor([r is not None for r in self_rows], dtype=torch.bool),
            keys,
            cross,
            torch.tensor([r is not None for r in cross_rows], dtype=torch.bool),
        )

    @staticmethod
    def from_pass(
        encoder_mask: Tensor | None, s: int, t: int, self_mask: Tensor | None, cross_mask: Tensor | None
    ) -> AppliedMasks:
        """From one parallel decoder pass over ``t`` positions: ``self_mask`` as given to attention
        (broadcastable to ``[T, T]``, e.g. ``[1, T, T]`` or ``[1, 1, T]``, or None), ``cross_mask``
        broadcastable to ``[T, S]`` or None, ``encoder_mask`` ``[S]`` or None."""
        dec = torch.zeros(t, t, dtype=torch.bool)
        if self_mask is not None:  # [..., T_q, T] with T_q = T (causal) or 1 (key padding only)
            dec = self_mask.cpu().reshape(self_mask.shape[-2], t).expand(t, t).clone()
        cross = torch.zeros(t, s, dtype=torch.bool)
        if cross_mask is not None:  # [..., 1, S]: key padding, the same for every query
            cross = cross_mask.cpu().reshape(-1, s).expand(t, s).clone()
        enc = None if encoder_mask is None else encoder_mask.cpu()[None, :].expand(s, s).clone()
        return AppliedMasks(
            enc,
            dec,
            torch.full((t,), self_mask is not None),
            torch.ones(t, t, dtype=torch.bool),
            cross,
            torch.full((t,), cross_mask is not None),
        )


@dataclass
class AttentionMaps:
    """Attention of one sentence pair (CPU float32 tensors; masks bool, **True = masked**).

    encoder_self: ``[L, H, S, S]`` rows = source queries, columns = source keys.
    decoder_self: ``[L, H, T, T]`` rows = target queries, columns = target keys.
    cross:        ``[L, H, T, S]`` rows = target queries, columns = source keys.
    src_key_padding_mask: ``[S]``; tgt_key_padding_mask: ``[T]``; causal_mask: ``[T, T]``.
    src_tokens: the S tokens the encoder saw (pads included); tgt_tokens: the T decoder
    input tokens, starting with BOS. ``applied``: the masks the model was given
    (:class:`AppliedMasks`), or None where a producer does not record them.
    """

    encoder_self: Tensor
    decoder_self: Tensor
    cross: Tensor
    src_key_padding_mask: Tensor
    tgt_key_padding_mask: Tensor
    causal_mask: Tensor
    src_tokens: list[str] = field(default_factory=list)
    tgt_tokens: list[str] = field(default_factory=list)
    applied: AppliedMasks | None = None

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
            None if self.applied is None else self.applied.truncated(t),
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
