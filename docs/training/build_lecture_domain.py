"""Build the project's own training pairs from the hand-written parts in docs/training/data/parts/*.tsv.

Two corpora come out of the parts, both MIT, written for this project:

- ``lecture-domain.{ko,en}``: the first parts (everything not named ``v2-*``), as before;
- ``lecture-corpus.{ko,en}`` and ``lecture-corpus-dev.{ko,en}``: the ``v2-*`` parts (the lecture
  topic, classroom talk, everyday sentences of two clauses or more), every ``DEV_EVERY``-th pair of
  each part held out for choosing checkpoints (never trained on).

A part may start with ``#`` header lines saying what it covers; they are skipped. A Korean line
seen before (in any part) is dropped, and so is every line that is an exact or near duplicate of
an evaluation line: the fixtures (tests/fixtures/*.tsv: the blind evaluation set, the lecturer's
sentences, the older held-out and copy checks) and any ``--eval`` prefix (the public test and
held-out sets), at 3-gram Jaccard >= 0.5 on the normalised Korean side (core/evaluation/overlap.py).
Run from the repository root:

    python docs/training/build_lecture_domain.py --eval ../shared/corpus/test/tatoeba-test \
        ../shared/corpus/test/flores200-devtest runs/data/tatoeba-ho ../shared/corpus/valid/jhe-dev
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.evaluation.overlap import closest, read_eval, read_train  # noqa: E402

THRESHOLD = 0.5
DEV_EVERY = 50
DATA = ROOT / "docs" / "training" / "data"


def read_part(part: Path) -> list[tuple[str, str, str]]:
    """``(ko, en, "part:line")`` of one part; header lines (``#``) and blank lines skipped.

    Raises:
        ValueError: a line without exactly one tab, or with an empty side (names part and line).
    """
    rows = []
    for n, line in enumerate(part.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != 2 or not cols[0].strip() or not cols[1].strip():
            raise ValueError(f"{part.name}:{n}: expected Korean<TAB>English, got {line[:80]!r}")
        rows.append((cols[0].strip(), cols[1].strip(), f"{part.name}:{n}"))
    return rows


def skeleton(ko: str) -> str:
    """The Korean line with digits and spaces folded: two lines with the same skeleton differ only
    in a number (the cap on repeated skeletons is checked on this)."""
    return re.sub(r"\s+", "", re.sub(r"\d+", "0", ko))


def write(prefix: Path, pairs: list[tuple[str, str]]) -> None:
    prefix.with_suffix(".ko").write_text("".join(k + "\n" for k, _ in pairs), encoding="utf-8")
    prefix.with_suffix(".en").write_text("".join(e + "\n" for _, e in pairs), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--eval", nargs="*", default=[], help="more evaluation sets: PREFIX (PREFIX.ko) or a .tsv fixture")
    args = ap.parse_args(argv)
    held = [(line, p.name) for p in sorted((ROOT / "tests" / "fixtures").glob("*.tsv")) for line in read_eval(p)]
    for e in args.eval:
        held += [(x, Path(e).name) for x in read_eval(e)] if e.endswith(".tsv") else read_train(e)
    seen: set[str] = set()
    per_part: dict[str, list[tuple[str, str, str]]] = {}
    for part in sorted((DATA / "parts").glob("*.tsv")):
        rows = []
        for ko, en, where in read_part(part):
            if ko not in seen:
                seen.add(ko)
                rows.append((ko, en, where))
        per_part[part.name] = rows
    everything = [r for rows in per_part.values() for r in rows]
    matches = closest([ko for ko, _, _ in everything], held)
    near = {
        where: (m.similarity, m.train_line, m.source)
        for (_, _, where), m in zip(everything, matches)
        if m is not None and m.similarity >= THRESHOLD
    }
    old, train, dev = [], [], []
    print(f"{'part':34} {'written':>8} {'kept':>6} {'dropped':>8}")
    for name, rows in per_part.items():
        kept = [(ko, en) for ko, en, where in rows if where not in near]
        print(f"{name:34} {len(rows):8d} {len(kept):6d} {len(rows) - len(kept):8d}")
        if not name.startswith("v2-"):
            old += kept
            continue
        for i, pair in enumerate(kept):
            (dev if i % DEV_EVERY == DEV_EVERY - 1 else train).append(pair)
    write(DATA / "lecture-domain", old)
    write(DATA / "lecture-corpus", train)
    write(DATA / "lecture-corpus-dev", dev)
    skeletons = Counter(skeleton(ko) for ko, _ in train + dev)
    top = skeletons.most_common(1)[0] if skeletons else ("", 0)
    print(
        f"{len(everything)} distinct Korean lines read, {len(near)} dropped as near duplicates of an evaluation "
        f"line (3-gram Jaccard >= {THRESHOLD}); written: lecture-domain {len(old)}, lecture-corpus {len(train)}, "
        f"lecture-corpus-dev {len(dev)} (every {DEV_EVERY}th pair of each v2 part); the most repeated skeleton "
        f"occurs {top[1]} times"
    )
    for where, (sim, line, src) in sorted(near.items(), key=lambda kv: -kv[1][0])[:40]:
        print(f"  {sim:.2f} {where}  ~  {line}  [{src}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
