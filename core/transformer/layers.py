"""Encoder and decoder layers (post-LN as in paper §3.1, or pre-LN as an option), position-wise
FFN (§3.3), positional encodings (§3.5)."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from core.transformer.attention import MultiHeadAttention
from core.transformer.kv_cache import LayerCache

_ACTIVATIONS = {"relu": torch.relu, "gelu": F.gelu, "swish": F.silu, "silu": F.silu}


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

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(active(self.dropout)(self.act(self.linear1(x))))


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


class EncoderLayer(nn.Module):
    """Self-attention then FFN, each wrapped in a residual connection with LayerNorm.

    post-LN (paper §3.1): x = LayerNorm(x + Dropout(Sublayer(x))).
    pre-LN (``norm_first``): x = x + Dropout(Sublayer(LayerNorm(x))).
    ``dropout`` is the residual dropout; ``attn_dropout`` acts on attention weights,
    ``act_dropout`` on the FFN hidden layer (both default to ``dropout``); ``activation`` is
    the FFN's non-linearity (see :class:`FeedForward`).
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        d_ff: int,
        dropout: float,
        attn_dropout: float | None = None,
        act_dropout: float | None = None,
        norm_first: bool = False,
        activation: str = "relu",
    ) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout if attn_dropout is None else attn_dropout)
        self.ff = FeedForward(d_model, d_ff, dropout if act_dropout is None else act_dropout, activation)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, mask: Tensor | None, need_weights: bool = False) -> tuple[Tensor, Tensor | None]:
        """``x [B, S, D]``, ``mask`` bool ``[B, 1, 1, S]`` (True = pad key) -> ``(x, weights [B, H, S, S] | None)``."""
        drop = active(self.dropout)
        if self.norm_first:
            h = self.norm1(x)
            a, w = self.self_attn(h, h, mask, need_weights)
            x = x + drop(a)
            return x + drop(self.ff(self.norm2(x))), w
        a, w = self.self_attn(x, x, mask, need_weights)
        x = self.norm1(x + drop(a))
        x = self.norm2(x + drop(self.ff(x)))
        return x, w


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention over the memory, FFN; each with a residual
    connection and LayerNorm, post-LN (paper §3.1) or pre-LN (``norm_first``), as in
    :class:`EncoderLayer`."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        d_ff: int,
        dropout: float,
        attn_dropout: float | None = None,
        act_dropout: float | None = None,
        norm_first: bool = False,
        activation: str = "relu",
    ) -> None:
        super().__init__()
        self.norm_first = norm_first
        p_attn = dropout if attn_dropout is None else attn_dropout
        self.self_attn = MultiHeadAttention(d_model, n_heads, p_attn)
        self.cross_attn = MultiHeadAttention(d_model, n_heads, p_attn)
        self.ff = FeedForward(d_model, d_ff, dropout if act_dropout is None else act_dropout, activation)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

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
        q, k_new, v_new = self.self_attn.project_qkv(self.norm1(x) if pre else x)
        if cache is None:
            k, v = k_new, v_new
            ck, cv = self.cross_attn.project_kv(memory)
        else:
            cache = cache.append(k_new, v_new)  # preallocated storage: no copy of the earlier positions
            k, v = cache.self_k, cache.self_v
            ck, cv = cache.cross_k, cache.cross_v
        a, w_self = self.self_attn.attend(q, k, v, self_mask, need_weights)
        x = x + drop(a) if pre else self.norm1(x + drop(a))
        q_cross = self.cross_attn.project_q(self.norm2(x) if pre else x)
        a, w_cross = self.cross_attn.attend(q_cross, ck, cv, cross_mask, need_weights)
        if pre:
            x = x + drop(a)
            x = x + drop(self.ff(self.norm3(x)))
        else:
            x = self.norm2(x + drop(a))
            x = self.norm3(x + drop(self.ff(x)))
        return x, w_self, w_cross, cache if cache is not None else LayerCache(k, v, ck, cv)
