"""Encoder and decoder layers (post-LN as in paper §3.1, or pre-LN as an option), position-wise
FFN (§3.3), positional encodings (§3.5)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from core.transformer.attention import MultiHeadAttention
from core.transformer.config import ModelConfig
from core.transformer.kv_cache import LayerCache

A = TypeVar("A")  # what a sub-layer computes besides its output (weights, a cache)
_ACTIVATIONS = {"relu": torch.relu, "gelu": F.gelu, "swish": F.silu, "silu": F.silu}
# the same functions writing into their input: used on the FFN's fresh hidden layer when no gradient is wanted
_IN_PLACE: dict[str, Callable[[Tensor], Tensor]] = {
    "relu": torch.relu_,
    "swish": lambda t: F.silu(t, inplace=True),
    "silu": lambda t: F.silu(t, inplace=True),
}


def _identity(x: Tensor) -> Tensor:
    return x


def active(dropout: nn.Dropout) -> Callable[[Tensor], Tensor]:
    """``dropout`` itself while it is training, else the identity. In eval mode ``nn.Dropout`` returns its
    input unchanged, so skipping the call changes no value; it saves the module call's overhead, which
    adds up in incremental decoding (some 25 calls per step of a 6-layer decoder). Forward hooks on a
    dropout module therefore run only in training (nothing here registers any)."""
    return dropout if dropout.training else _identity


class FeedForward(nn.Module):
    """FFN(x) = act(x W1 + b1) W2 + b2; the paper's act is max(0, ·) (Eq. 2). ``[B, T, D] -> [B, T, D]``.

    ``activation``: "relu" (paper), "gelu" (exact erf form) or "swish"/"silu" (x·σ(x), OPUS-MT).
    ``dropout`` is the activation dropout, applied to the ``[B, T, d_ff]`` hidden layer.
    Raises KeyError for an unknown activation (ModelConfig validates it first)."""

    def __init__(self, d_model: int, d_ff: int, dropout: float, activation: str = "relu") -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)
        self.act = _ACTIVATIONS[activation]
        self.activation = activation

    def forward(self, x: Tensor) -> Tensor:
        h = self.linear1(x)  # [B, T, d_ff]
        act_ = _IN_PLACE.get(getattr(self, "activation", ""))  # (modules pickled before it have no name: out of place)
        if act_ is not None and not torch.is_grad_enabled() and not self.dropout.training:
            # in place: the same values without a second [B, T, d_ff] tensor
            return self.linear2(act_(h))
        return self.linear2(active(self.dropout)(self.act(h)))


def sinusoid_table(max_len: int, d_model: int, layout: str = "interleaved") -> Tensor:
    """The §3.5 sinusoids as a ``[max_len, d_model]`` float32 table.

    PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(pos / 10000^(2i/D)).
    ``layout="interleaved"``: as written (even features sin, odd cos; float32 arithmetic, the
    table our own models were trained with). ``layout="halves"``: Marian/OPUS-MT's layout, the
    ⌈D/2⌉ sines first, then the ⌊D/2⌋ cosines, computed in float64 as Hugging Face's
    ``MarianSinusoidalPositionalEmbedding`` does, then cast to float32.
    """
    if layout == "halves":
        pos = torch.arange(max_len, dtype=torch.float64)[:, None]
        j = torch.arange(d_model, dtype=torch.float64)
        angle = pos / torch.pow(10000.0, 2 * torch.div(j, 2, rounding_mode="floor") / d_model)  # [max_len, D]
        return torch.cat([torch.sin(angle[:, 0::2]), torch.cos(angle[:, 1::2])], dim=1).float()
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    div = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(pos * div)
    pe[:, 1::2] = torch.cos(pos * div)
    return pe


class PositionalEncoding(nn.Module):
    """Adds position information to ``[B, T, D]`` embeddings.

    "sinusoidal": PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(...) (§3.5).
    "sinusoidal_halves": the same values with sines in features [0, D/2), cosines after (Marian).
    "learned": a trained ``[max_len, D]`` table. See :func:`sinusoid_table`.
    Raises ValueError when ``offset + T > max_len``.
    """

    pe: Tensor  # [max_len, D] (sinusoidal kinds: a buffer, not saved)
    table: nn.Embedding  # (learned)

    def __init__(self, d_model: int, max_len: int, kind: str) -> None:
        super().__init__()
        self.kind = kind
        self.max_len = max_len
        if kind == "learned":
            self.table = nn.Embedding(max_len, d_model)
        else:
            pe = sinusoid_table(max_len, d_model, "halves" if kind == "sinusoidal_halves" else "interleaved")
            self.register_buffer("pe", pe, persistent=False)

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        t = x.size(1)
        if offset + t > self.max_len:
            raise ValueError(f"sequence of {offset + t} positions exceeds max_len {self.max_len}")
        if self.kind == "learned":
            return x + self.table.weight[offset : offset + t].to(x.dtype)
        return x + self.pe[offset : offset + t].to(x.dtype)


def residual(
    x: Tensor,
    norm: nn.LayerNorm,
    drop: Callable[[Tensor], Tensor],
    norm_first: bool,
    sublayer: Callable[[Tensor], tuple[Tensor, A]],
) -> tuple[Tensor, A]:
    """One residual connection around a sub-layer, the one place pre- and post-LN are written
    (the Annotated Transformer's ``SublayerConnection``).

    post-LN (paper §3.1, "LayerNorm(x + Sublayer(x))"): ``norm(x + drop(sublayer(x)))``.
    pre-LN (``norm_first``, Nguyen & Salazar 2019): ``x + drop(sublayer(norm(x)))``.
    ``x [B, T, D]``; ``sublayer`` maps ``[B, T, D]`` to ``([B, T, D], extra)``, where ``extra`` is
    whatever else it computed (attention weights, a cache) and is handed back unchanged.
    Returns ``(x [B, T, D], extra)``."""
    if norm_first:
        y, extra = sublayer(norm(x))
        return x + drop(y), extra
    y, extra = sublayer(x)
    return norm(x + drop(y)), extra


class EncoderLayer(nn.Module):
    """Self-attention then FFN, each wrapped in a residual connection with LayerNorm
    (:func:`residual`: post-LN as in paper §3.1, or pre-LN with ``config.norm_first``).

    Built from the model's :class:`~core.transformer.config.ModelConfig`: ``dropout`` is the
    residual dropout, ``attn_dropout_p`` acts on attention weights, ``act_dropout_p`` on the FFN
    hidden layer, ``activation`` is the FFN's non-linearity (see :class:`FeedForward`).
    """

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        c = config
        self.norm_first = c.norm_first
        self.self_attn = MultiHeadAttention(c.d_model, c.n_heads, c.attn_dropout_p)
        self.ff = FeedForward(c.d_model, c.d_ff, c.act_dropout_p, c.activation)
        self.norm1 = nn.LayerNorm(c.d_model)
        self.norm2 = nn.LayerNorm(c.d_model)
        self.dropout = nn.Dropout(c.dropout)

    def forward(self, x: Tensor, mask: Tensor | None, need_weights: bool = False) -> tuple[Tensor, Tensor | None]:
        """``x [B, S, D]``, ``mask`` bool ``[B, 1, 1, S]`` (True = pad key) -> ``(x, weights [B, H, S, S] | None)``."""
        pre, drop = self.norm_first, active(self.dropout)
        x, w = residual(x, self.norm1, drop, pre, lambda h: self.self_attn(h, h, mask, need_weights))
        x, _ = residual(x, self.norm2, drop, pre, lambda h: (self.ff(h), None))
        return x, w


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention over the memory, FFN; each in a residual connection
    with LayerNorm (:func:`residual`), built from the model's config as :class:`EncoderLayer`."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        c = config
        self.norm_first = c.norm_first
        self.self_attn = MultiHeadAttention(c.d_model, c.n_heads, c.attn_dropout_p)
        self.cross_attn = MultiHeadAttention(c.d_model, c.n_heads, c.attn_dropout_p)
        self.ff = FeedForward(c.d_model, c.d_ff, c.act_dropout_p, c.activation)
        self.norm1 = nn.LayerNorm(c.d_model)
        self.norm2 = nn.LayerNorm(c.d_model)
        self.norm3 = nn.LayerNorm(c.d_model)
        self.dropout = nn.Dropout(c.dropout)

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        self_mask: Tensor | None,
        cross_mask: Tensor | None,
        need_weights: bool = False,
        cache: LayerCache | None = None,
    ) -> tuple[Tensor, Tensor | None, Tensor | None, LayerCache]:
        """One decoder layer.

        Args:
            x: ``[B, T_new, D]`` the new target positions (all T when ``cache`` is None).
            memory: ``[B, S, D]`` encoder output (ignored when ``cache`` holds its projections).
            self_mask: bool ``[B|1, 1, T_new, T_k]``, True = masked (causal | target padding).
            cross_mask: bool ``[B, 1, 1, S]``, True = source pad key.
            cache: keys/values of earlier positions, or None.
        Returns:
            ``(x [B, T_new, D], self weights [B, H, T_new, T_k] | None,
            cross weights [B, H, T_new, S] | None, cache covering all T_k positions)``.
        """
        pre, drop = self.norm_first, active(self.dropout)

        def self_attention(h: Tensor) -> tuple[Tensor, tuple[Tensor | None, LayerCache]]:
            q, k_new, v_new = self.self_attn.project_qkv(h)
            if cache is None:
                new = LayerCache(k_new, v_new, *self.cross_attn.project_kv(memory))
            else:
                new = cache.append(k_new, v_new)  # preallocated storage: no copy of the earlier positions
            a, w = self.self_attn.attend(q, new.self_k, new.self_v, self_mask, need_weights)
            return a, (w, new)

        x, (w_self, new_cache) = residual(x, self.norm1, drop, pre, self_attention)
        ck, cv = new_cache.cross_k, new_cache.cross_v
        x, w_cross = residual(
            x,
            self.norm2,
            drop,
            pre,
            lambda h: self.cross_attention(h, ck, cv, cross_mask, need_weights, new_cache.shared),
        )
        x, _ = residual(x, self.norm3, drop, pre, lambda h: (self.ff(h), None))
        return x, w_self, w_cross, new_cache

    def cross_attention(
        self,
        h: Tensor,
        cross_k: Tensor,
        cross_v: Tensor,
        cross_mask: Tensor | None,
        need_weights: bool = False,
        shared: tuple[int, int] | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """Cross-attention of ``h [B, T_new, D]`` to the memory's keys and values ``[B_src, H, S, d_head]``
        (``cross_mask [B_src, 1, 1, S]``, True = source pad key). ``B_src`` is ``B`` or, for one new
        position per row (``T_new == 1``), a divisor of it: the rows are then grouped, ``r = B / B_src``
        consecutive rows per source sentence (the hypotheses of a batched beam search), and each group's
        r queries attend to their sentence's keys as r query positions of one attention, so the keys
        and values are neither copied per row nor read once per row. Returns ``(out [B, T_new, D],
        weights [B, H, T_new, S] | None)``, the same values as with the keys repeated per row.

        ``shared=(n, r)``: only the first ``n`` sources are shared, by the first ``n · r`` rows (r each),
        and each later row has a source of its own (a batched beam's hypotheses, then its greedy rows):
        both parts attend as above, in one call of the projections.

        Raises:
            ValueError: ``B`` is not ``B_src`` and not a multiple of it with ``T_new == 1``."""
        if shared is not None and 0 < shared[0] < cross_k.size(0):
            n, rows = shared[0], shared[0] * shared[1]
            mask_a, mask_b = (None, None) if cross_mask is None else (cross_mask[:n], cross_mask[n:])
            out_a, w_a = self.cross_attention(h[:rows], cross_k[:n], cross_v[:n], mask_a, need_weights)
            out_b, w_b = self.cross_attention(h[rows:], cross_k[n:], cross_v[n:], mask_b, need_weights)
            w = None if w_a is None or w_b is None else torch.cat([w_a, w_b])
            return torch.cat([out_a, out_b]), w
        q = self.cross_attn.project_q(h)  # [B, H, T_new, d_head]
        b, n_heads, t_new, d_head = q.shape
        b_src = cross_k.size(0)
        if b_src == b:
            # one query per row (a decoding step): Eq. 1 written out (the weights path) runs about twice
            # as fast as SDPA's kernel on one query against a padded memory; the same output up to rounding
            explicit = need_weights or (t_new == 1 and not self.training)
            out, w = self.cross_attn.attend(q, cross_k, cross_v, cross_mask, explicit)
            return out, (w if need_weights else None)
        if t_new != 1 or b % b_src:
            raise ValueError(f"{b} decoder rows with {t_new} new positions cannot share the keys of {b_src} sources")
        r = b // b_src
        q = q.view(b_src, r, n_heads, d_head).transpose(1, 2)  # [B_src, H, r, d_head]: a group's rows as queries
        out, w = self.cross_attn.attend(q, cross_k, cross_v, cross_mask, need_weights)  # out [B_src, r, D]
        if w is not None:  # [B_src, H, r, S] -> [B, H, 1, S]
            w = w.transpose(1, 2).reshape(b, n_heads, 1, w.size(-1))
        return out.reshape(b, 1, out.size(-1)), w
