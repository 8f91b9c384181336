"""What the model code needs from a tokenizer, as a type: our BPE tokenizers
(:class:`core.tokenizers.bpe.TextTokenizer`) and OPUS-MT's SentencePiece ones
(:class:`core.tokenizers.spm.SentencePieceTokenizer`) both satisfy it."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from core.tokenizers.bpe import Encoding


class SubwordTokenizer(Protocol):
    """Text ↔ subword ids for one language. Special ids: ``pad_id``, ``bos_id`` (None when the
    vocabulary has no BOS, as OPUS-MT's), ``eos_id``, ``unk_id``; ``encode`` never adds them and
    never produces one from typed text."""

    @property
    def pad_id(self) -> int: ...

    @property
    def bos_id(self) -> int | None: ...

    @property
    def eos_id(self) -> int: ...

    @property
    def unk_id(self) -> int: ...

    @property
    def vocab_size(self) -> int: ...

    def normalize(self, text: str) -> str: ...

    def encode(self, text: str) -> Encoding: ...

    def decode(self, ids: Iterable[int]) -> str: ...

    def id_to_token(self, i: int) -> str: ...

    def ids_to_tokens(self, ids: Iterable[int]) -> list[str]: ...

    def save(self, path: str | Path) -> None: ...


__all__ = ["SubwordTokenizer"]
