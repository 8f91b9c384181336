"""Parallel corpus reading, length-bucketed batching and padding for training.

Any line-aligned pair of files ``PREFIX.ko`` / ``PREFIX.en`` can be used; a spec
``PREFIX*W`` repeats that set W times per epoch (in-domain upsampling).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

from core.textio import read_aligned
from core.tokenizers.bpe import TextTokenizer
from core.tokenizers.protocol import SubwordTokenizer


@dataclass
class DataSpec:
    """A parallel set: ``prefix`` (without .ko/.en) and an integer upsampling ``weight``."""

    prefix: str
    weight: int = 1

    @classmethod
    def parse(cls, spec: str) -> DataSpec:
        """``"corpus/train/tatoeba*4"`` -> DataSpec("corpus/train/tatoeba", 4). Raises ValueError."""
        m = re.fullmatch(r"(.+?)(?:\*(\d+))?", spec)
        if m is None:
            raise ValueError(f"{spec!r}: empty data spec")
        weight = int(m.group(2)) if m.group(2) else 1
        if weight < 1:
            raise ValueError(f"{spec}: weight must be >= 1")
        return cls(m.group(1), weight)

    @property
    def name(self) -> str:
        return Path(self.prefix).name


def read_parallel(prefix: str, src_ext: str = "ko", tgt_ext: str = "en") -> list[tuple[str, str]]:
    """Read ``prefix.src_ext`` and ``prefix.tgt_ext`` as aligned pairs, skipping pairs with an empty side.

    Raises:
        FileNotFoundError: a file is missing. ValueError: the files have different line counts.
    """
    src, tgt = read_aligned(f"{prefix}.{src_ext}", f"{prefix}.{tgt_ext}")  # split on \n only
    return [(s, t) for s, t in zip(src, tgt) if s.strip() and t.strip()]


def _ids(tok: SubwordTokenizer, texts: list[str]) -> list[list[int]]:
    """Token ids of ``texts``: our BPE tokenizers in one batched call of the tokenizers library
    (as training has always encoded); any other tokenizer (OPUS-MT's SentencePiece) text by text."""
    if isinstance(tok, TextTokenizer):
        return [list(e.ids) for e in tok.tokenizer.encode_batch(texts, add_special_tokens=False)]
    return [list(tok.encode(text).ids) for text in texts]


def encode_pairs(
    pairs: list[tuple[str, str]], src_tok: SubwordTokenizer, tgt_tok: SubwordTokenizer, max_len: int, eos_id: int, bos_id: int
) -> list[tuple[list[int], list[int]]]:
    """Token ids per pair: source ``tokens + [EOS]``, target ``[BOS] + tokens + [EOS]``.

    Pairs whose source or target would exceed ``max_len`` positions are dropped.
    """
    out = []
    for s, t in zip(_ids(src_tok, [s for s, _ in pairs]), _ids(tgt_tok, [t for _, t in pairs])):
        src_ids = s + [eos_id]
        tgt_ids = [bos_id] + t + [eos_id]
        if len(src_ids) <= max_len and len(tgt_ids) <= max_len:
            out.append((src_ids, tgt_ids))
    return out


def make_batches(examples: list[tuple[list[int], list[int]]], max_tokens: int, seed: int) -> list[list[int]]:
    """Group example indices into length-bucketed batches of about ``max_tokens`` padded tokens.

    Examples are sorted by (source, target) length after a seeded shuffle (ties broken
    randomly); a batch grows while ``n_examples × longest side`` stays within ``max_tokens``.
    Batch order is shuffled with the same seed. Deterministic for a given ``seed``.
    """
    g = torch.Generator().manual_seed(seed)
    perm = torch.randperm(len(examples), generator=g).tolist()
    order = sorted(perm, key=lambda i: (len(examples[i][0]), len(examples[i][1])))
    batches: list[list[int]] = []
    cur: list[int] = []
    longest = 0
    for i in order:
        n = max(len(examples[i][0]), len(examples[i][1]))
        if cur and (len(cur) + 1) * max(longest, n) > max_tokens:
            batches.append(cur)
            cur, longest = [], 0
        cur.append(i)
        longest = max(longest, n)
    if cur:
        batches.append(cur)
    shuffle = torch.randperm(len(batches), generator=g).tolist()
    return [batches[i] for i in shuffle]


def collate(examples: list[tuple[list[int], list[int]]], indices: list[int], pad_id: int) -> tuple[Tensor, Tensor]:
    """Pad a batch: returns ``src [B, S]`` and ``tgt [B, T+1]`` (decoder input is ``tgt[:, :-1]``,
    the prediction target is ``tgt[:, 1:]``)."""
    srcs = [examples[i][0] for i in indices]
    tgts = [examples[i][1] for i in indices]
    s_len, t_len = max(map(len, srcs)), max(map(len, tgts))
    src = torch.full((len(indices), s_len), pad_id, dtype=torch.long)
    tgt = torch.full((len(indices), t_len), pad_id, dtype=torch.long)
    for b, (s, t) in enumerate(zip(srcs, tgts)):
        src[b, : len(s)] = torch.tensor(s)
        tgt[b, : len(t)] = torch.tensor(t)
    return src, tgt
