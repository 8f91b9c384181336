"""Word-level comparison of a translation with its reference: "comes out as the reference, or
within one word" (adapting a model to a lecturer's sentences and its benchmark use it)."""

from __future__ import annotations

import re


def words(text: str) -> list[str]:
    """Lower-cased words of ``text`` without punctuation (``[\\w']+`` runs)."""
    return re.findall(r"[\w']+", text.lower())


def word_distance(a: str, b: str) -> int:
    """Levenshtein distance between the word sequences of ``a`` and ``b`` (:func:`words`): the
    fewest words inserted, deleted or replaced to turn one into the other (0: the same words)."""
    x, y = words(a), words(b)
    prev = list(range(len(y) + 1))
    for i, wx in enumerate(x, start=1):
        cur = [i]
        for j, wy in enumerate(y, start=1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (wx != wy)))
        prev = cur
    return prev[-1]
