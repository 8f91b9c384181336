"""Toy translation tasks whose right cross-attention is known in advance, for watching a small
Transformer learn (core/training/live_session.py).

Every task is character-level: one token per character, one shared vocabulary for source and
target (:class:`CharVocab`, ids 0-3 are [PAD], [BOS], [EOS], [UNK] as in :class:`ModelConfig`).
Each :class:`Example` carries its known alignment: for target character ``t`` the source
character positions it comes from (an empty tuple: none, not scored).

- ``copy``: ``abcd`` -> ``abcd``; target t aligns to source t (the diagonal).
- ``reverse``: ``abcd`` -> ``dcba``; target t aligns to source n-1-t (the anti-diagonal).
- ``sort``: ``3141`` -> ``1134``; a digit aligns to every source position holding that digit.
- ``numbers``: Sino-Korean number words to digits, 1 to 9,999 (``삼백이십일`` -> ``321``). The
  digit of a place (천 1000, 백 100, 십 10) aligns to the source character before the place word
  (삼 in 삼백); a 1 there is not written (백 = 100), so it aligns to the place word itself; the
  units digit aligns to the last character (일 in 삼백이십일); a 0 is not written and aligns to
  nothing (302 = 삼백이: the 0 is not scored). The alignment is monotone with gaps.
- ``file``: pairs from a TSV file (:mod:`core.training.pairs_file`); no known alignment.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from core.errors import InputError
from core.training.pairs_file import read_pairs

SPECIALS = ("[PAD]", "[BOS]", "[EOS]", "[UNK]")  # ids 0-3: ModelConfig's pad/bos/eos/unk defaults
TASKS = ("copy", "reverse", "sort", "numbers", "file")
DIGIT_WORDS = "일이삼사오육칠팔구"  # 1..9
PLACE_WORDS = ((1000, "천"), (100, "백"), (10, "십"))
LETTERS = "abcdefghijkl"
# Updates after which the default LiveSettings have learned each task (bench/learn.py measures them)
PRESET_UPDATES = {"copy": 400, "reverse": 800, "numbers": 600, "sort": 600, "file": 1000}


class CharVocab:
    """Character vocabulary: ``SPECIALS`` then the given symbols in sorted order.

    ``encode(text)`` -> ids (an unknown character becomes [UNK], id 3); ``decode(ids)`` -> text up
    to the first [EOS], specials dropped; ``tokens(ids)`` -> one label per id, specials included.
    """

    def __init__(self, symbols: Iterable[str]) -> None:
        chars = sorted({ch for s in symbols for ch in s} - set(SPECIALS))
        self.itos: list[str] = [*SPECIALS, *chars]
        self.stoi = {s: i for i, s in enumerate(self.itos)}

    @property
    def size(self) -> int:
        return len(self.itos)

    def encode(self, text: str) -> list[int]:
        return [self.stoi.get(ch, 3) for ch in text]

    def decode(self, ids: Iterable[int]) -> str:
        out = []
        for i in ids:
            if i == 2:
                break
            if i >= len(SPECIALS):
                out.append(self.itos[i])
        return "".join(out)

    def tokens(self, ids: Iterable[int]) -> list[str]:
        return [self.itos[i] if 0 <= i < len(self.itos) else "[UNK]" for i in ids]


@dataclass(frozen=True)
class Example:
    """One pair; ``alignment[t]``: the source character positions target character ``t`` comes
    from (empty: none, not scored), or None for the whole example when nothing is known."""

    src: str
    tgt: str
    alignment: tuple[tuple[int, ...], ...] | None = None


@dataclass
class ToyTask:
    """A task: its name, one-line description, vocabulary, training pairs and a fixed held-out
    probe set (no probe pair occurs among the training pairs)."""

    name: str
    description: str
    vocab: CharVocab
    train: list[Example]
    probe: list[Example]

    @property
    def has_alignment(self) -> bool:
        """True when every probe example has a known alignment."""
        return all(e.alignment is not None for e in self.probe)

    @property
    def max_chars(self) -> int:
        """The longest source or target in characters."""
        return max(max(len(e.src), len(e.tgt)) for e in self.train + self.probe)


def korean_number(n: int) -> tuple[str, tuple[tuple[int, ...], ...]]:
    """Sino-Korean words of ``1 <= n <= 9999`` and the alignment of each digit of ``str(n)``.

    >>> korean_number(321)
    ('삼백이십일', ((0,), (2,), (4,)))

    Raises:
        ValueError: ``n`` outside 1..9999.
    """
    if not 1 <= n <= 9999:
        raise ValueError(f"number words cover 1..9999, got {n}")
    words, where = "", {}
    for value, place in PLACE_WORDS:
        d = n // value % 10
        if d == 0:
            continue
        if d > 1:
            words += DIGIT_WORDS[d - 1]
        where[value] = len(words) - 1 if d > 1 else len(words)
        words += place
    if n % 10:
        words += DIGIT_WORDS[n % 10 - 1]
        where[1] = len(words) - 1
    digits = str(n)
    align = tuple((where[10 ** (len(digits) - 1 - i)],) if d != "0" else () for i, d in enumerate(digits))
    return words, align


def _random_strings(rng: random.Random, alphabet: str, lengths: tuple[int, int], count: int) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < count:
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(*lengths)))
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


def _sequence_examples(name: str, strings: list[str]) -> list[Example]:
    out = []
    for s in strings:
        n = len(s)
        if name == "copy":
            out.append(Example(s, s, tuple((t,) for t in range(n))))
        elif name == "reverse":
            out.append(Example(s, s[::-1], tuple((n - 1 - t,) for t in range(n))))
        else:  # sort
            tgt = "".join(sorted(s))
            out.append(Example(s, tgt, tuple(tuple(i for i, c in enumerate(s) if c == ch) for ch in tgt)))
    return out


def make_task(name: str, seed: int = 0, path: str | Path | None = None, n_train: int = 4000, n_probe: int = 100) -> ToyTask:
    """Build task ``name`` (one of :data:`TASKS`) deterministically from ``seed``.

    ``copy``/``reverse``: strings of 3-9 letters ``a``-``l``; ``sort``: 3-9 digits; ``n_train``
    training pairs and ``n_probe`` held-out probe pairs, all distinct. ``numbers``: every number
    1..9,999 once, ``n_probe`` of them held out. ``file``: the pairs of the TSV ``path`` (at least
    10, at most 5,000, each side at most 60 characters); every 10th pair (at most ``n_probe``) is
    held out as the probe set.

    Raises:
        ValueError: an unknown task name.
        InputError: ``file`` without ``path``, or a file the task cannot use (the message names
            the file and the problem).
    """
    rng = random.Random(f"{name}:{seed}")
    if name in ("copy", "reverse", "sort"):
        alphabet = "0123456789" if name == "sort" else LETTERS
        strings = _random_strings(rng, alphabet, (3, 9), n_train + n_probe)
        examples = _sequence_examples(name, strings)
        probe, train = examples[:n_probe], examples[n_probe:]
        what = {"copy": "copy the letters", "reverse": "reverse the letters", "sort": "sort the digits"}[name]
        vocab = CharVocab([alphabet])
    elif name == "numbers":
        numbers = list(range(1, 10_000))
        rng.shuffle(numbers)
        examples = [Example(words, str(n), align) for n in numbers for words, align in [korean_number(n)]]
        probe, train = examples[:n_probe], examples[n_probe:]
        what = "Korean number words to digits (삼백이십일 -> 321)"
        vocab = CharVocab([DIGIT_WORDS, "천백십", "0123456789"])
    elif name == "file":
        if path is None:
            raise InputError("the file task needs a TSV file of source<TAB>target pairs")
        pairs = read_pairs(path, max_pairs=5000, max_chars=60)
        if len(pairs) < 10:
            raise InputError(f"{path}: {len(pairs)} pairs; the file task needs at least 10")
        held = set(range(0, len(pairs), 10)[:n_probe])
        probe = [Example(s, t) for i, (s, t) in enumerate(pairs) if i in held]
        train = [Example(s, t) for i, (s, t) in enumerate(pairs) if i not in held]
        what = f"pairs from {Path(path).name}"
        vocab = CharVocab(s + t for s, t in pairs)
    else:
        raise ValueError(f"unknown task {name!r}; choose one of {', '.join(TASKS)}")
    return ToyTask(name, what, vocab, train, probe)
