"""The keys and values a decoder layer has computed, kept for incremental decoding.

A step adds one position. Concatenating the old keys with the new ones copies the whole cache at
every step (O(t) per step, a new tensor each time); :meth:`LayerCache.append` instead writes the
new position into storage allocated ahead (capacity doubling, amortized O(1)) and hands out views
of the filled part. No cache ever changes what another cache holds: storage is written only past
the positions any cache of it covers (``filled``), so a cache stepped back (:meth:`truncate`) or a
copy of a session that steps on its own (``core.decoding.live.branch``) gets new storage at its
first append instead of writing over the other's positions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor

MIN_CAPACITY = 16  # positions allocated at least (a step allocates nothing until this is full)


class _Storage:
    """Keys and values ``[B, H, capacity, d_head]``; positions ``[0, filled)`` are written and
    never written again."""

    __slots__ = ("k", "v", "filled")

    def __init__(self, k: Tensor, v: Tensor, filled: int) -> None:
        self.k, self.v, self.filled = k, v, filled


@dataclass
class LayerCache:
    """Keys/values one decoder layer has already computed, for incremental decoding.

    self_k, self_v: ``[B, H, t, d_head]`` for the t target positions seen so far (views of
    preallocated storage once :meth:`append` has run).
    cross_k, cross_v: ``[B, H, S, d_head]`` projections of the encoder memory (computed once), or
    ``[B_src, H, S, d_head]`` shared by ``r = B / B_src`` consecutive rows each (a batched beam's
    hypotheses of one sentence; see :meth:`core.transformer.layers.DecoderLayer.cross_attention`).
    shared: ``(n, r)`` when only the first ``n`` sources are shared, by ``r`` consecutive rows each,
    and every later row has a source of its own (a batched beam with greedy rows after its
    hypotheses); None otherwise. Kept by :meth:`append`; the other methods give None.
    """

    self_k: Tensor
    self_v: Tensor
    cross_k: Tensor
    cross_v: Tensor
    _storage: _Storage | None = field(default=None, repr=False, compare=False)
    shared: tuple[int, int] | None = None

    def append(self, k_new: Tensor, v_new: Tensor) -> LayerCache:
        """This cache followed by ``k_new, v_new [B, H, n, d_head]``: a new cache covering
        ``t + n`` positions, equal to concatenating along the position axis (the same values).
        The new positions are written into this cache's storage when it is the newest cache of
        that storage and has room; otherwise the t positions are first copied to new storage of
        twice the needed capacity. This cache is unchanged either way. With gradients wanted
        (any of the tensors requires grad) it concatenates, so backward sees every step's keys.

        Raises:
            RuntimeError: as ``torch.cat`` would, for keys of another batch size."""
        t, n = self.self_k.size(2), k_new.size(2)
        if (
            (torch.is_grad_enabled() and any(x.requires_grad for x in (k_new, v_new, self.self_k, self.self_v)))
            or self.self_k.shape[:2] != k_new.shape[:2]
            or self.self_k.dtype != k_new.dtype
            or self.self_k.device != k_new.device
        ):
            # gradients: a write into storage that earlier steps' views came from would invalidate them
            # for backward; a batch, dtype or device change: concatenation's own error or promotion
            k, v = torch.cat([self.self_k, k_new], 2), torch.cat([self.self_v, v_new], 2)
            return LayerCache(k, v, self.cross_k, self.cross_v, shared=self.shared)
        st = self._storage
        if (
            st is None
            or st.filled != t
            or t + n > st.k.size(2)  # (batch, dtype, device: as self_k's, checked above)
            or (st.k.is_inference() and not torch.is_inference_mode_enabled())
        ):
            b, h, _, d = k_new.shape
            cap = max(2 * (t + n), MIN_CAPACITY)
            k, v = k_new.new_empty(b, h, cap, d), v_new.new_empty(b, h, cap, d)
            k[:, :, :t] = self.self_k
            v[:, :, :t] = self.self_v
            st = _Storage(k, v, t)
        st.k.narrow(2, t, n).copy_(k_new)  # (narrow: the slice [:, :, t : t + n] in one call)
        st.v.narrow(2, t, n).copy_(v_new)
        st.filled = t + n
        return LayerCache(st.k.narrow(2, 0, t + n), st.v.narrow(2, 0, t + n), self.cross_k, self.cross_v, st, self.shared)

    def truncate(self, t: int) -> LayerCache:
        """The cache as it was after ``t`` target positions (used to step back)."""
        return LayerCache(self.self_k[:, :, :t], self.self_v[:, :, :t], self.cross_k, self.cross_v, self._storage)

    def reorder(self, index: Tensor, cross_k: Tensor, cross_v: Tensor, shared: tuple[int, int] | None = None) -> LayerCache:
        """Self-attention rows reordered/selected by ``index [B']`` (beam parents), with the given
        cross-attention keys and values (``shared``: as the field). One gather of the whole storage
        (capacity included), so the next :meth:`append` writes in place instead of copying the t
        positions again."""
        st, t = self._storage, self.self_k.size(2)
        if st is None or st.filled != t:
            return LayerCache(self.self_k[index], self.self_v[index], cross_k, cross_v, shared=shared)
        new = _Storage(st.k.index_select(0, index), st.v.index_select(0, index), t)
        return LayerCache(new.k.narrow(2, 0, t), new.v.narrow(2, 0, t), cross_k, cross_v, new, shared)

    def select(self, index: Tensor) -> LayerCache:
        """Reorder/select batch rows (beam search): ``index [B']`` -> cache with B' rows (new tensors)."""
        return LayerCache(self.self_k[index], self.self_v[index], self.cross_k[index], self.cross_v[index])
