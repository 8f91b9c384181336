"""The encoder-decoder Transformer (paper §3, Figure 1), with ``encode`` and ``decode`` split
as in the Annotated Transformer. Outputs raw logits (no softmax: the loss applies log-softmax)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from core.transformer.config import ModelConfig
from core.transformer.layers import DecoderLayer, EncoderLayer, LayerCache, PositionalEncoding, active
from core.transformer.masks import causal_mask, cross_mask, decoder_self_mask, key_padding_mask
from core.transformer.vocab_projection import project_vocab


@dataclass
class EncoderOutput:
    """memory ``[B, S, D]``; src_key_padding_mask ``[B, S]`` (True = pad);
    self_attn: per layer ``[B, H, S, S]`` when weights were asked for, else None;
    attn_mask: the mask tensor every encoder self-attention was given, ``[B, 1, 1, S]`` bool
    (True = masked), or None when attention ran unmasked (nothing padded)."""

    memory: Tensor
    src_key_padding_mask: Tensor
    self_attn: list[Tensor] | None = None
    attn_mask: Tensor | None = None


@dataclass
class DecoderOutput:
    """logits ``[B, T_new, V]``; per layer self_attn ``[B, H, T_new, T_k]`` and cross_attn
    ``[B, H, T_new, S]`` when asked for; cache: per-layer keys/values covering all T_k positions.

    self_mask / cross_mask: the mask tensors the attention layers were **given** (bool, True =
    masked): ``[B, 1, T_new, T_k]`` and ``[B, 1, 1, S]``, or None when that attention ran
    unmasked (e.g. one new query on the KV cache with no target padding: every cached key is
    visible, so no causal mask is applied; the future keys do not exist yet)."""

    logits: Tensor
    self_attn: list[Tensor] | None
    cross_attn: list[Tensor] | None
    cache: list[LayerCache]
    self_mask: Tensor | None = None
    cross_mask: Tensor | None = None


def captured(weights: list[Tensor] | None) -> list[Tensor]:
    """The per-layer attention weights of an encode/decode call made with ``need_weights=True``.

    Raises:
        ValueError: the call did not capture them (``need_weights=False``)."""
    if weights is None:
        raise ValueError("attention weights were not captured: call with need_weights=True")
    return weights


def _key_mask(key_padding: Tensor | None) -> Tensor | None:
    """``[B, S]`` key padding -> ``[B, 1, 1, S]`` mask, or None when nothing is padded (faster path,
    same result)."""
    if key_padding is None or not bool(key_padding.any()):
        return None
    return cross_mask(key_padding)


class Transformer(nn.Module):
    """Encoder-decoder Transformer, written from "Attention Is All You Need".

    Embeddings are multiplied by √d_model (§3.4; off with ``scale_embedding=False``) and summed
    with positional encodings (§3.5; interleaved, Marian's sin/cos halves, or learned);
    ``tie_output`` shares the target embedding with the pre-softmax projection (§3.4);
    ``share_src_tgt_embed`` makes source and target embeddings one matrix (joint vocabulary,
    three-way tying, Press & Wolf 2017). With ``norm_first`` (pre-LN) each stack ends in a
    final LayerNorm (``encoder_norm`` / ``decoder_norm``). With ``final_logits_bias`` the logits
    get a ``[V]`` bias after the output projection (Marian). All options: :class:`ModelConfig`.
    """

    def __init__(self, config: ModelConfig, init_weights: bool = True) -> None:
        """``init_weights=False`` skips the random initialisation below, for a model whose every
        weight is loaded next (:func:`core.checkpoints.checkpoint.load_checkpoint`: it checks that
        the file holds them all), which saves about a tenth of a second at start-up."""
        super().__init__()
        self.config = c = config
        self.src_embed = nn.Embedding(c.src_vocab_size, c.d_model, padding_idx=c.pad_id)
        if c.share_src_tgt_embed:
            self.tgt_embed = self.src_embed
        else:
            self.tgt_embed = nn.Embedding(c.tgt_vocab_size, c.d_model, padding_idx=c.pad_id)
        self.src_pos = PositionalEncoding(c.d_model, c.max_len, c.positional)
        self.tgt_pos = PositionalEncoding(c.d_model, c.max_len, c.positional)
        self.dropout = nn.Dropout(c.dropout)
        self.encoder_layers = nn.ModuleList(EncoderLayer(c) for _ in range(c.n_encoder_layers))
        self.decoder_layers = nn.ModuleList(DecoderLayer(c) for _ in range(c.n_decoder_layers))
        # pre-LN leaves the residual stream un-normalized: one final LayerNorm per stack
        self.encoder_norm = nn.LayerNorm(c.d_model) if c.norm_first else None
        self.decoder_norm = nn.LayerNorm(c.d_model) if c.norm_first else None
        self.generator = nn.Linear(c.d_model, c.tgt_vocab_size, bias=False)
        # Marian's final_logits_bias [V]; a parameter so it is saved and loaded like any weight
        self.final_logits_bias = nn.Parameter(torch.zeros(c.tgt_vocab_size)) if c.final_logits_bias else None
        self.embed_scale = math.sqrt(c.d_model) if c.scale_embedding else 1.0
        if init_weights:
            self._reset_parameters()
        if c.tie_output:
            self.generator.weight = self.tgt_embed.weight

    def _reset_parameters(self) -> None:
        for name, p in self.named_parameters():
            if "embed" in name or "table" in name:
                nn.init.normal_(p, mean=0.0, std=self.config.d_model**-0.5)
            elif p.dim() > 1:
                nn.init.xavier_uniform_(p)
        with torch.no_grad():
            for emb in (self.src_embed, self.tgt_embed):
                emb.weight[self.config.pad_id].zero_()

    def num_parameters(self) -> int:
        """Distinct trainable parameters (tied matrices counted once)."""
        return sum(p.numel() for p in self.parameters())

    def encode(self, src: Tensor, src_key_padding_mask: Tensor | None = None, need_weights: bool = False) -> EncoderOutput:
        """Run the encoder stack.

        Args:
            src: ``[B, S]`` source ids.
            src_key_padding_mask: ``[B, S]`` bool, True = pad; derived from ``pad_id`` if None.
            need_weights: also return each layer's self-attention ``[B, H, S, S]``.
        Raises:
            ValueError: if S exceeds ``max_len``.
        """
        if src_key_padding_mask is None:
            src_key_padding_mask = key_padding_mask(src, self.config.pad_id)
        mask = _key_mask(src_key_padding_mask)  # [B, 1, 1, S]: mask pad *keys* (None if no pad)
        x = active(self.dropout)(self.src_pos(self.src_embed(src) * self.embed_scale))
        weights: list[Tensor] | None = [] if need_weights else None
        for layer in self.encoder_layers:
            x, w = layer(x, mask, need_weights)
            if weights is not None:
                weights.append(w)
        if self.encoder_norm is not None:
            x = self.encoder_norm(x)
        return EncoderOutput(x, src_key_padding_mask, weights, mask)

    def decode(
        self,
        tgt: Tensor,
        memory: Tensor,
        src_key_padding_mask: Tensor | None,
        tgt_key_padding_mask: Tensor | None = None,
        need_weights: bool = False,
        cache: list[LayerCache] | None = None,
        causal: bool = True,
        logits_buffer: Tensor | None = None,
    ) -> DecoderOutput:
        """Run the decoder stack on target positions and return raw logits.

        Args:
            tgt: ``[B, T_new]`` target ids. Without ``cache`` this is the whole prefix
                (teacher forcing / training); with ``cache`` only the new positions.
            memory: ``[B, S, D]`` encoder output.
            src_key_padding_mask: ``[B, S]`` bool, True = source pad. With a ``cache`` whose
                cross-attention keys have ``B_src`` rows, ``B = r · B_src`` and one new position per
                row: ``[B_src, S]``, r consecutive rows per source (see
                :meth:`~core.transformer.layers.DecoderLayer.cross_attention`).
            tgt_key_padding_mask: ``[B, T_k]`` bool, True = target pad, over all key positions.
            cache: per-layer keys/values of the first ``t0`` positions (incremental decoding).
            causal: apply the causal mask (§3.2.3). ``False`` lets every position see the whole
                target, future included: only for the "why the mask exists" demonstration.
            logits_buffer: ``[N, V]`` with ``N ≥ B · T_new``, or None: memory the logits may be written
                into (its first rows; see :func:`~core.transformer.vocab_projection.project_vocab`),
                so that a decoding loop reuses one buffer instead of a new ``[B, T_new, V]`` tensor
                per step. The returned logits are then overwritten by the next call given it.
        Returns:
            :class:`DecoderOutput` with logits ``[B, T_new, V]``.
        """
        t0 = cache[0].self_k.size(2) if cache is not None else 0
        t_new = tgt.size(1)
        if t_new == 1 and tgt_key_padding_mask is None:
            self_mask = None  # one new query may see every cached key: nothing to mask
        elif not causal:  # the demonstration: target key padding only (True = pad), no causal mask
            self_mask = None if tgt_key_padding_mask is None else tgt_key_padding_mask[:, None, None, :]
        else:
            rows = causal_mask(t0 + t_new, device=tgt.device)[t0:]  # [T_new, T_k], True = future key
            self_mask = decoder_self_mask(tgt_key_padding_mask, rows)
        c_mask = _key_mask(src_key_padding_mask)
        x = self.tgt_embed(tgt) * self.embed_scale
        x = active(self.dropout)(self.tgt_pos(x, offset=t0))
        self_w: list[Tensor] | None = [] if need_weights else None
        cross_w: list[Tensor] | None = [] if need_weights else None
        new_cache = []
        for i, layer in enumerate(self.decoder_layers):
            x, ws, wc, lc = layer(x, memory, self_mask, c_mask, need_weights, cache[i] if cache else None)
            new_cache.append(lc)
            if self_w is not None and cross_w is not None:
                self_w.append(ws)
                cross_w.append(wc)
        if self.decoder_norm is not None:
            x = self.decoder_norm(x)
        # (in vocabulary blocks for many rows, the bias added block by block: the same values)
        logits = project_vocab(self.generator, x, self.final_logits_bias, logits_buffer)
        return DecoderOutput(logits, self_w, cross_w, new_cache, self_mask, c_mask)

    def forward(self, src: Tensor, tgt: Tensor) -> Tensor:
        """Teacher-forced logits ``[B, T, V]`` for ``src [B, S]`` and decoder input ``tgt [B, T]``
        (``start_id`` first). Target key padding (True = pad) comes from ``pad_id``; position 0 is
        the decoder start and never padding, even when ``start_id == pad_id`` (OPUS-MT)."""
        enc = self.encode(src)
        tgt_kpm = key_padding_mask(tgt, self.config.pad_id)
        if self.config.start_id == self.config.pad_id:
            tgt_kpm[:, 0] = False
        return self.decode(tgt, enc.memory, enc.src_key_padding_mask, tgt_kpm).logits
