"""Sentence pairs from a small tab-separated file, for training on a user's own pairs (the "from a
file" toy task, adapting a checkpoint to a lecturer's sentences).

Format: one pair per line, ``source<TAB>target``; further tab-separated columns are ignored (a
fixture's "accepted | …" alternatives: only the text before the first `` | `` of the target is
kept); blank lines and lines starting with ``#`` are skipped. UTF-8, lines split on ``\\n`` only.
"""

from __future__ import annotations

from pathlib import Path

from core.errors import InputError
from core.textio import check_regular_file, clean_text, read_lines

MAX_FILE_BYTES = 8 << 20  # a few thousand pairs are a few hundred kB


def parse_pairs(lines: list[str], name: str = "<pairs>", max_pairs: int = 20_000, max_chars: int = 500) -> list[tuple[str, str]]:
    """(source, target) pairs of ``lines`` in the format above; ``name`` is used in messages.

    Raises:
        InputError: a line without a tab, an empty side, a side longer than ``max_chars``
            characters, no pairs at all, or more than ``max_pairs`` (the message names the file and
            the line, counted from 1).
    """
    pairs: list[tuple[str, str]] = []
    for n, raw in enumerate(lines, start=1):
        line = clean_text(raw)
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) < 2:
            raise InputError(f"{name}, line {n}: no tab; each line must be source<TAB>target")
        src, tgt = cols[0].strip(), cols[1].split(" | ")[0].strip()
        if not src or not tgt:
            raise InputError(f"{name}, line {n}: the {'source' if not src else 'target'} is empty")
        longest = max(len(src), len(tgt))
        if longest > max_chars:
            raise InputError(f"{name}, line {n}: {longest} characters, more than {max_chars} on one side")
        pairs.append((src, tgt))
        if len(pairs) > max_pairs:
            raise InputError(f"{name}: more than {max_pairs:,} pairs (line {n}); use a smaller file")
    if not pairs:
        raise InputError(f"{name}: no pairs (each line must be source<TAB>target)")
    return pairs


def read_pairs(path: str | Path, max_pairs: int = 20_000, max_chars: int = 500) -> list[tuple[str, str]]:
    """:func:`parse_pairs` of the UTF-8 file ``path``.

    Raises:
        InputError: the file is missing, not a regular file, larger than 8 MiB, not UTF-8, or its
            content is refused by :func:`parse_pairs` (one line naming the file).
    """
    try:
        check_regular_file(path, MAX_FILE_BYTES)
        lines = read_lines(path)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (OSError, ValueError) as exc:
        raise InputError(str(exc)) from None
    return parse_pairs(lines, str(path), max_pairs, max_chars)
