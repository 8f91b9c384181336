"""Subword tokenizers (BPE, Sennrich et al. 2016) built with the ``tokenizers`` library.

Normalization (the same in training and at run time, stored inside the tokenizer JSON):
NFC (so macOS-style decomposed jamo equal composed syllables), full-width ASCII → ASCII,
any run of whitespace/newlines → one space, trimmed. Nothing is silently dropped: a
character the vocabulary lacks becomes a visible ``[UNK]`` token (one per character).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, normalizers, pre_tokenizers
from tokenizers.models import BPE
from tokenizers.trainers import BpeTrainer

from core.textio import clean_text

SPECIAL_TOKENS = ["[PAD]", "[BOS]", "[EOS]", "[UNK]"]  # ids 0, 1, 2, 3
PAD, BOS, EOS, UNK = SPECIAL_TOKENS


def _normalizer() -> normalizers.Normalizer:
    fullwidth = [normalizers.Replace(chr(0xFF01 + i), chr(0x21 + i)) for i in range(94)]
    return normalizers.Sequence(
        [
            normalizers.NFC(),
            *fullwidth,
            normalizers.Replace("▁", "_"),  # ▁ marks word starts in tokens
            normalizers.Replace(Regex(r"\s+"), " "),
            normalizers.Strip(),
        ]
    )


def _pre_tokenizer() -> pre_tokenizers.PreTokenizer:
    return pre_tokenizers.Sequence(
        [
            pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always"),
            pre_tokenizers.Punctuation(behavior="isolated"),
            pre_tokenizers.Digits(individual_digits=True),
        ]
    )


@dataclass
class Encoding:
    """ids and tokens ``[N]`` of one text, and each token's (start, end) character offsets
    into the *normalized* text."""

    ids: list[int]
    tokens: list[str]
    offsets: list[tuple[int, int]]


class TextTokenizer:
    """A BPE tokenizer for one language, wrapping ``tokenizers.Tokenizer``.

    Our special tokens have fixed ids: ``[PAD]`` 0, ``[BOS]`` 1, ``[EOS]`` 2, ``[UNK]`` 3.
    ``encode`` adds no special tokens and never produces one from typed text (``"[EOS]"`` typed is
    four ordinary pieces); the model code adds BOS/EOS where they belong.

    The tokenizer interface (shared with
    :class:`core.tokenizers.spm.SentencePieceTokenizer`): ``encode``, ``decode``,
    ``normalize``, ``id_to_token``, ``ids_to_tokens``, ``vocab_size``, ``save`` and the
    special ids ``pad_id``, ``bos_id`` (None when the vocabulary has no BOS), ``eos_id``, ``unk_id``.
    Token labels of special ids are always ``[PAD]``/``[BOS]``/``[EOS]``/``[UNK]``.
    """

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        for i, tok in enumerate(SPECIAL_TOKENS):
            if tokenizer.token_to_id(tok) != i:
                raise ValueError(f"special token {tok} must have id {i}")
        # User text is text: a typed "[PAD]" or "[EOS]" is cut into ordinary pieces ("[", "P", ...),
        # never matched to the control id (which would mask the word as padding or end the
        # sentence). Special tokens enter only by id, where the model code places them.
        tokenizer.encode_special_tokens = True
        self.pad_id, self.bos_id, self.eos_id, self.unk_id = 0, 1, 2, 3

    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int, min_frequency: int = 2) -> TextTokenizer:
        """Learn a BPE vocabulary of ``vocab_size`` entries (specials included) from ``texts``."""
        tok = Tokenizer(BPE(unk_token=UNK, fuse_unk=False))
        tok.normalizer = _normalizer()
        tok.pre_tokenizer = _pre_tokenizer()
        tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
        trainer = BpeTrainer(
            vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=SPECIAL_TOKENS, show_progress=False
        )
        tok.train_from_iterator(texts, trainer=trainer)
        return cls(tok)

    @classmethod
    def from_file(cls, path: str | Path) -> TextTokenizer:
        """Load a tokenizer JSON. Raises Exception subclasses from ``tokenizers`` or ValueError."""
        return cls(Tokenizer.from_file(str(path)))

    def save(self, path: str | Path) -> None:
        self.tokenizer.save(str(path))

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.get_vocab_size(with_added_tokens=True)

    def normalize(self, text: str) -> str:
        """The text as the tokenizer sees it (NFC, full-width folded, whitespace collapsed)."""
        return self.tokenizer.normalizer.normalize_str(clean_text(text))

    def encode(self, text: str) -> Encoding:
        """Tokenize ``text`` (normalized first). Invisible format characters (a byte-order mark,
        zero-width spaces, direction marks) are removed and bytes that were not valid UTF-8 (lone
        surrogates from the command line) become U+FFFD first (:func:`core.textio.clean_text`);
        other unknown characters become ``[UNK]``."""
        enc = self.tokenizer.encode(clean_text(text), add_special_tokens=False)
        return Encoding(list(enc.ids), list(enc.tokens), [(int(o[0]), int(o[1])) for o in enc.offsets])

    def decode(self, ids: Iterable[int]) -> str:
        """Join ids into text, skipping ``[PAD]``, ``[BOS]`` and ``[EOS]``; ``[UNK]`` stays visible."""
        skip = {self.pad_id, self.bos_id, self.eos_id}
        keep = [i for i in ids if i not in skip]
        return self.tokenizer.decode(keep, skip_special_tokens=False)

    def id_to_token(self, i: int) -> str:
        """The token's label; an id outside the vocabulary reads ``[UNK]``."""
        return self.tokenizer.id_to_token(i) or UNK

    def ids_to_tokens(self, ids: Iterable[int]) -> list[str]:
        return [self.id_to_token(int(i)) for i in ids]
