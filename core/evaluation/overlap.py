"""Overlap between an evaluation set and training files: exact and near-duplicate Korean lines.

A line is normalised (NFC, lower case, punctuation and spaces removed) and cut into character
3-grams; two lines are *near duplicates* when the Jaccard similarity of their 3-gram sets is at least
``threshold`` (default 0.6, which flags a sentence that differs by an ending or one word). Candidates
come from an inverted 3-gram index, so 150k training lines against a few hundred evaluation lines take
seconds.

    python -m core.evaluation.overlap --eval tests/fixtures/fresh_everyday.tsv tests/fixtures/fresh_lecture.tsv \\
        --train ../shared/corpus/train/tatoeba docs/training/data/lecture-domain [--threshold 0.6] [--show 20]
"""

from __future__ import annotations

import argparse
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path


def normalise(text: str) -> str:
    """NFC, lower case, and only letters and digits kept."""
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFC", text).lower())


def trigrams(text: str) -> frozenset[str]:
    """Character 3-grams of :func:`normalise` (the whole string when it is shorter than 3)."""
    t = normalise(text)
    return frozenset(t[i : i + 3] for i in range(max(len(t) - 2, 1)))


@dataclass
class Match:
    """The closest training line to one evaluation line; ``similarity`` is 3-gram Jaccard in [0, 1]."""

    eval_line: str
    train_line: str
    source: str
    similarity: float
    exact: bool


def closest(eval_lines: list[str], train: list[tuple[str, str]]) -> list[Match | None]:
    """For each evaluation line, its most similar ``(line, source name)`` of ``train`` (None if no
    3-gram is shared)."""
    index: dict[str, list[int]] = {}
    grams = [trigrams(t) for t, _ in train]
    for i, g in enumerate(grams):
        for x in g:
            index.setdefault(x, []).append(i)
    exact = {normalise(t): i for i, (t, _) in enumerate(train)}
    out: list[Match | None] = []
    for line in eval_lines:
        g = trigrams(line)
        shared = Counter(i for x in g for i in index.get(x, ()))
        if not shared:
            out.append(None)
            continue
        best, sim = max(((i, n / len(g | grams[i])) for i, n in shared.items()), key=lambda p: p[1])
        hit = exact.get(normalise(line))
        if hit is not None:
            best, sim = hit, 1.0
        out.append(Match(line, train[best][0], train[best][1], sim, hit is not None))
    return out


def read_eval(path: str | Path) -> list[str]:
    """Korean side of a ``Korean<TAB>…`` fixture (``#`` comment lines skipped)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [x.split("\t", 1)[0].strip() for x in lines if x.strip() and not x.startswith("#")]


def read_train(prefix: str) -> list[tuple[str, str]]:
    """Korean lines of ``PREFIX.ko`` (or the first column of ``PREFIX.tsv``), with the prefix's name."""
    p = Path(prefix)
    ko = p.with_name(p.name + ".ko")
    if ko.is_file():
        lines = ko.read_text(encoding="utf-8").splitlines()
    else:
        lines = [x.split("\t", 1)[0] for x in p.with_name(p.name + ".tsv").read_text(encoding="utf-8").splitlines()]
    return [(x, p.name) for x in lines if x.strip()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--eval", nargs="+", required=True, help="fixture files Korean<TAB>…")
    ap.add_argument("--train", nargs="+", required=True, help="PREFIX (PREFIX.ko or PREFIX.tsv)")
    ap.add_argument("--threshold", type=float, default=0.6, help="near-duplicate 3-gram Jaccard (default 0.6)")
    ap.add_argument("--show", type=int, default=20, help="print this many closest pairs")
    args = ap.parse_args(argv)
    train = [row for prefix in args.train for row in read_train(prefix)]
    for path in args.eval:
        lines = read_eval(path)
        matches = [m for m in closest(lines, train) if m is not None]
        exact = sum(m.exact for m in matches)
        near = sum(m.similarity >= args.threshold and not m.exact for m in matches)
        print(
            f"{path}: {len(lines)} lines against {len(train)} training lines: {exact} exact, "
            f"{near} near duplicates (3-gram Jaccard >= {args.threshold})"
        )
        for m in sorted(matches, key=lambda m: -m.similarity)[: args.show]:
            print(f"  {m.similarity:.2f} {m.eval_line}  ~  {m.train_line}  [{m.source}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
