"""Head ablation: zero chosen heads' outputs before the output projection W^O (§3.2.2), for
encoder self-attention, decoder (masked) self-attention or cross-attention.

An ablation spec is a list of ``(kind, layer, head)`` with kind ``"enc"``, ``"dec"`` or
``"cross"`` and **0-based** layer and head indices. Imports only torch.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import cast

from torch import nn

from core.transformer.attention import MultiHeadAttention
from core.transformer.kinds import KINDS


def attention_module(model: nn.Module, kind: str, layer: int) -> MultiHeadAttention:
    """The :class:`MultiHeadAttention` of one kind in one 0-based layer of a
    :class:`~core.transformer.model.Transformer`.

    Raises:
        ValueError: unknown kind or layer out of range.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown attention kind {kind!r}; expected one of {', '.join(KINDS)}")
    layers = cast(nn.ModuleList, model.encoder_layers if kind == "enc" else model.decoder_layers)
    if not 0 <= layer < len(layers):
        raise ValueError(f"layer {layer + 1} out of range: the model has {len(layers)} {kind} layers")
    blk = layers[layer]
    attn = blk.cross_attn if kind == "cross" else blk.self_attn
    assert isinstance(attn, MultiHeadAttention)
    return attn


@contextmanager
def ablated(model: nn.Module, spec: Iterable[tuple[str, int, int]]) -> Iterator[nn.Module]:
    """Within the ``with`` block, every ``(kind, layer, head)`` of ``spec`` (0-based) has its head
    output zeroed before W^O (:attr:`MultiHeadAttention.ablated_heads`); on exit, even after an
    error, every module's previous setting is restored.

    Raises:
        ValueError: unknown kind, layer or head out of range (checked before anything changes).
    """
    per: dict[int, tuple[MultiHeadAttention, set[int]]] = {}
    for kind, layer, head in spec:
        mha = attention_module(model, kind, layer)
        if not 0 <= head < mha.n_heads:
            raise ValueError(f"head {head + 1} out of range: the model has {mha.n_heads} heads")
        per.setdefault(id(mha), (mha, set()))[1].add(head)
    saved = [(mha, mha.ablated_heads) for mha, _ in per.values()]
    try:
        for mha, heads in per.values():
            mha.ablated_heads = tuple(sorted(set(mha.ablated_heads) | heads))
        yield model
    finally:
        for mha, before in saved:
            if before:
                mha.ablated_heads = before
            else:  # back to the class default: nothing left on the instance
                mha.__dict__.pop("ablated_heads", None)


__all__ = ["ablated", "attention_module", "KINDS"]
