"""Shared by the text-only batches (:mod:`core.decoding.text_batch`, :mod:`core.decoding.text_beam`):
the padded source batch, the encoder run on groups of similar length, each sentence's output budget,
and one step's candidate scores."""

from __future__ import annotations

from typing import cast

import torch
from torch import Tensor

from core.decoding.session import Source, max_output_steps
from core.transformer.kv_cache import LayerCache
from core.transformer.layers import DecoderLayer
from core.transformer.model import Transformer

PAD_WASTE = 0.1  # encoder groups: padded positions at most this share of the real ones


def _source_batch(model: Transformer, sources: list[Source]) -> tuple[Tensor, Tensor]:
    """``src [B, S]`` padded with ``pad_id`` and ``src_key_padding_mask [B, S]`` (True = pad)."""
    c = model.config
    device = next(model.parameters()).device
    s_len = max(len(s.ids) for s in sources)
    src = torch.full((len(sources), s_len), c.pad_id, dtype=torch.long)
    kpm = torch.ones(len(sources), s_len, dtype=torch.bool)
    for i, s in enumerate(sources):
        src[i, : len(s.ids)] = torch.tensor(s.ids)
        kpm[i, : len(s.ids)] = False
    return src.to(device), kpm.to(device)


def length_groups(lengths: list[int], waste: float = PAD_WASTE) -> list[list[int]]:
    """Indices into ``lengths`` in groups of similar length (sorted, stable): a group grows while its
    padded size (members × longest) stays within ``1 + waste`` times its real positions."""
    groups: list[list[int]] = []
    real = 0
    for i in sorted(range(len(lengths)), key=lambda i: lengths[i]):
        g = groups[-1] if groups else None
        if g is not None and (len(g) + 1) * lengths[i] <= (1 + waste) * (real + lengths[i]):
            g.append(i)
            real += lengths[i]
        else:
            groups.append([i])
            real = lengths[i]
    return groups


def encode_grouped(model: Transformer, src: Tensor, src_key_padding_mask: Tensor) -> tuple[Tensor, list[LayerCache] | None]:
    """The encoder output ``memory [B, S, D]`` of ``src [B, S]`` (``src_key_padding_mask [B, S]``, True =
    pad), with the sentences encoded in groups of similar length (:func:`length_groups`) so that the
    matrix products run on few pad positions (CTranslate2 removes padding for the same reason), and,
    when there is more than one group, the decoder's first cache: per layer the cross-attention keys
    and values ``[B, H, S, d_head]`` projected group by group, no target position yet (else None: the
    first decoder step projects them). Positions past a group's longest sentence are 0 in the memory,
    keys and values (the other pad positions hold what the encoder computed there); every attention
    to a pad position is masked."""
    lengths = (~src_key_padding_mask).sum(1).tolist()
    groups = length_groups(lengths)
    if len(groups) == 1:
        return model.encode(src, src_key_padding_mask).memory, None
    b, s_len = src.shape
    # sentences sorted by length (as the text-only batches are): every group is a run of rows, written
    # with slices and only its pad tail zeroed; else gathered and scattered by index into zeros
    runs = all(g == list(range(g[0], g[0] + len(g))) for g in groups)
    new = Tensor.new_empty if runs else Tensor.new_zeros
    memory: Tensor | None = None
    cross: list[tuple[Tensor, Tensor]] = []
    for g in groups:
        s_g = max(lengths[i] for i in g)
        rows = slice(g[0], g[0] + len(g)) if runs else torch.tensor(g, device=src.device)
        m = model.encode(src[rows, :s_g], src_key_padding_mask[rows, :s_g]).memory
        if memory is None:
            memory = new(m, (b, s_len, m.size(-1)))
        _put(memory, rows, 1, s_g, m)
        for layer_no, layer in enumerate(model.decoder_layers):
            k, v = cast(DecoderLayer, layer).cross_attn.project_kv(m)  # [n_g, H, s_g, d_head]
            if len(cross) <= layer_no:
                cross.append((new(k, (b, k.size(1), s_len, k.size(3))), new(v, (b, v.size(1), s_len, v.size(3)))))
            _put(cross[layer_no][0], rows, 2, s_g, k)
            _put(cross[layer_no][1], rows, 2, s_g, v)
    cache = [LayerCache(ck[:, :, :0], cv[:, :, :0], ck, cv) for ck, cv in cross]
    assert memory is not None  # (at least one group)
    return memory, cache


def _put(whole: Tensor, rows: slice | Tensor, dim: int, s_g: int, part: Tensor) -> None:
    """Write a group's ``part`` (its rows, positions ``[0, s_g)`` along ``dim``) into ``whole``: for a run
    of rows (a slice) by a copy into the view, positions from ``s_g`` on set to 0; for rows by index, by
    scattering into ``whole`` (zeros already)."""
    if isinstance(rows, slice):
        view = whole[rows]
        view.narrow(dim, 0, s_g).copy_(part)
        view.narrow(dim, s_g, whole.size(dim) - s_g).zero_()
    elif dim == 1:
        whole[rows, :s_g] = part
    else:
        whole[rows, :, :s_g] = part


def _budgets(model: Transformer, sources: list[Source], max_output: int | None) -> list[int]:
    """Each sentence's output budget (:func:`max_output_steps`), capped at ``max_output`` tokens when given."""
    c = model.config
    return [min(max_output_steps(s.n_real, c.max_len), max_output or c.max_len) for s in sources]


def _step_scores(model: Transformer, out_logits: Tensor, logps: Tensor) -> Tensor:
    """``logps[:, None] + log_softmax(logits)`` ``[N, V]`` in float32, pad excluded where the model
    never outputs it: the candidates' scores exactly as :func:`beam_search` computes them.
    ``out_logits [N, T, V]`` (a decoding step's, used for nothing else) is overwritten when it is
    float32 and needs no gradient: the log-softmax is written over the last position's logits."""
    last = out_logits[:, -1]
    if last.dtype == torch.float32 and not last.requires_grad and last.is_contiguous():
        # in place: the same kernel and values, without a second [N, V] tensor (wide at a 65k vocabulary)
        cand = torch.log_softmax(last, -1, out=last)
    else:
        cand = last.float().log_softmax(-1)
    cand.add_(logps[:, None])  # in place: the same sums, one [N, V] tensor fewer (wide at a 65k vocabulary)
    if getattr(model.config, "never_output_pad", False):
        cand[:, model.config.pad_id] = float("-inf")
    return cand
