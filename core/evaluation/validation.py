"""chrF of greedy translations of validation sources, for best-checkpoint selection."""

from __future__ import annotations

import torch

from core.tokenizers.protocol import SubwordTokenizer
from core.transformer.model import Transformer


@torch.no_grad()
def valid_chrf(
    model: Transformer,
    src_tok: SubwordTokenizer,
    tgt_tok: SubwordTokenizer,
    sources: list[str],
    references: list[str],
    batch_size: int = 64,
) -> float:
    """sacreBLEU chrF of batched greedy translations of ``sources`` (checkpoint selection)."""
    import sacrebleu

    from core.decoding.session import greedy_batch

    model.eval()
    order = sorted(range(len(sources)), key=lambda i: len(sources[i]))
    hyps = [""] * len(sources)
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        for i, ids in zip(chunk, greedy_batch(model, src_tok, tgt_tok, [sources[i] for i in chunk])):
            hyps[i] = tgt_tok.decode(ids)
    model.train()
    return round(sacrebleu.metrics.CHRF().corpus_score(hyps, [references]).score, 2)
