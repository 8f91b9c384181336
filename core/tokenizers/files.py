"""Open a tokenizer file of either kind: our BPE JSON or the SentencePiece descriptor an OPUS-MT
import writes (kept apart from both tokenizer classes, which it chooses between)."""

from __future__ import annotations

from pathlib import Path

from core.textio import MAX_JSON_BYTES, check_regular_file, read_json
from core.tokenizers.bpe import TextTokenizer
from core.tokenizers.spm import SentencePieceTokenizer

DESCRIPTOR_MAX_BYTES = 64 << 10  # a SentencePiece descriptor names its files (a few hundred bytes)


def load_tokenizer(path: str | Path):
    """Load either kind of tokenizer file: a ``tokenizers`` JSON (:class:`TextTokenizer`) or a
    SentencePiece descriptor ``{"type": "sentencepiece", ...}`` written by the OPUS-MT import
    (:class:`core.tokenizers.spm.SentencePieceTokenizer`).

    Raises:
        ValueError: bad descriptor, missing file, not a regular file (a FIFO or device is never
            opened), larger than a tokenizer can be, or ``sentencepiece`` not installed.
        Exception: anything ``tokenizers`` raises for a bad JSON.
    """
    path = Path(path)
    try:
        size = check_regular_file(path, MAX_JSON_BYTES)
    except FileNotFoundError:
        raise ValueError(f"{path}: missing") from None
    if DESCRIPTOR_MAX_BYTES < size <= MAX_JSON_BYTES:  # too large for a descriptor: a tokenizers JSON,
        return TextTokenizer.from_file(path)  # parsed once, by ``tokenizers`` (not twice: 0.1 s saved at start-up)
    try:
        head = read_json(path)
    except ValueError:
        head = None  # let ``tokenizers`` report what is wrong with it
    if isinstance(head, dict) and head.get("type") == "sentencepiece":
        return SentencePieceTokenizer.from_file(path)
    return TextTokenizer.from_file(path)
