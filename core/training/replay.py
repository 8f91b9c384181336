"""The replay set a checkpoint ships: general pairs mixed into every update when the model is
adapted to a few pairs of a user's, so that it does not forget what it could translate.

``CHECKPOINT/replay.tsv`` holds ``Korean<TAB>English`` lines (``#`` lines are comments saying how
the set was chosen). The shipped ko-en-nc's was built by :func:`choose_replay` from
``docs/training/data/lecture-domain.{ko,en}`` (pairs written for this project, MIT; ko-en-nc was
trained on them): a seeded random sample of pairs of 10-80 Korean characters, none of them within
a character-3-gram Jaccard similarity of 0.5 of any line of an evaluation fixture
(``tests/fixtures/*.tsv``), so adapting never trains on a test sentence by the back door::

    python -m core.training.replay --out checkpoints/ko-en-nc/replay.tsv [--n 200] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from core.evaluation.overlap import trigrams
from core.textio import read_aligned, read_lines
from core.training.pairs_file import read_pairs

REPLAY = "replay.tsv"
SOURCE = "docs/training/data/lecture-domain"


def load_replay(checkpoint_dir: str | Path) -> list[tuple[str, str]]:
    """The replay pairs of a checkpoint folder; an empty list when it ships none.

    Raises:
        InputError: the file exists but cannot be read as pairs (the message names it).
    """
    path = Path(checkpoint_dir) / REPLAY
    return read_pairs(path) if path.is_file() else []


def choose_replay(
    pairs: list[tuple[str, str]],
    exclude: list[str],
    n: int = 200,
    seed: int = 0,
    max_similarity: float = 0.5,
    chars: tuple[int, int] = (10, 80),
) -> list[tuple[str, str]]:
    """``n`` pairs drawn at random (``seed``) from ``pairs`` whose Korean has ``chars`` (min, max)
    characters and a character-3-gram Jaccard similarity below ``max_similarity`` with every line
    of ``exclude``; in their order in ``pairs``."""
    banned = [trigrams(x) for x in exclude]

    def far(ko: str) -> bool:
        g = trigrams(ko)
        return all(len(g & b) / max(len(g | b), 1) < max_similarity for b in banned)

    fits = [i for i, (ko, en) in enumerate(pairs) if chars[0] <= len(ko) <= chars[1] and en.strip()]
    random.Random(seed).shuffle(fits)
    chosen: list[int] = []
    for i in fits:
        if len(chosen) == n:
            break
        if far(pairs[i][0]):
            chosen.append(i)
    return [pairs[i] for i in sorted(chosen)]


def fixture_lines(folder: Path) -> list[str]:
    """The first column of every non-comment line of the ``.tsv`` fixtures in ``folder``."""
    out = []
    for f in sorted(folder.glob("*.tsv")):
        out += [x.split("\t", 1)[0] for x in read_lines(f) if x.strip() and not x.startswith("#")]
    return out


def read_sources(sources: list[str]) -> list[tuple[str, str]]:
    """The pairs of every source in order: a ``.tsv`` file of pairs, or a PREFIX of ``.ko``/``.en``.

    Raises:
        InputError: a file cannot be read as pairs, or the two sides differ in length.
    """
    out: list[tuple[str, str]] = []
    for src in sources:
        if src.endswith(".tsv"):
            out += read_pairs(src)
        else:
            ko, en = read_aligned(src + ".ko", src + ".en")
            out += list(zip(ko, en))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m core.training.replay", description=__doc__)
    p.add_argument("--out", required=True)
    p.add_argument("--n", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--source", nargs="+", default=[SOURCE], help=f"PREFIX (.ko/.en) or .tsv files (default {SOURCE})")
    p.add_argument("--exclude", nargs="*", default=[], help="more evaluation files (one Korean line each) to stay away from")
    p.add_argument("--chars", type=int, nargs=2, default=(10, 80), metavar=("MIN", "MAX"), help="Korean length (default 10 80)")
    args = p.parse_args(argv)
    exclude = fixture_lines(Path("tests/fixtures")) + [x for f in args.exclude for x in read_lines(f) if x.strip()]
    chosen = choose_replay(read_sources(args.source), exclude, args.n, args.seed, chars=(args.chars[0], args.chars[1]))
    cmd = f"python -m core.training.replay --n {args.n} --seed {args.seed} --chars {args.chars[0]} {args.chars[1]}"
    head = (
        f"# Replay set for adapting: {len(chosen)} pairs of {' '.join(args.source)} (written for this project, MIT),\n"
        f"# chosen by {cmd} --source {' '.join(args.source)}\n"
        f"# (a seeded random sample of {args.chars[0]}-{args.chars[1]} Korean characters, none near a line of tests/fixtures"
        f"{''.join(' or ' + f for f in args.exclude)})\n"
    )
    Path(args.out).write_text(head + "".join(f"{k}\t{e}\n" for k, e in chosen), encoding="utf-8")
    print(f"{args.out}: {len(chosen)} pairs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
