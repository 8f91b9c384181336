"""Build docs/training/data/lecture-domain.{ko,en} from the hand-written parts in data/parts/*.tsv.

Lines that are exact or near duplicates of any evaluation fixture (tests/fixtures/*.tsv: the held-out
sets and the older lecture and copy checks) are dropped, so the fixtures stay unseen: 3-gram Jaccard
>= 0.5 on the normalised Korean side (core/evaluation/overlap.py). Run from the repository root:

    python docs/training/build_lecture_domain.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.evaluation.overlap import closest, read_eval  # noqa: E402

THRESHOLD = 0.5


def main() -> int:
    fixtures = [p for p in sorted((ROOT / "tests" / "fixtures").glob("*.tsv"))]
    held = [(line, p.name) for p in fixtures for line in read_eval(p)]
    pairs, seen = [], set()
    for part in sorted((ROOT / "docs" / "training" / "data" / "parts").glob("*.tsv")):
        for n, line in enumerate(part.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            ko, en = (x.strip() for x in line.split("\t"))
            if ko not in seen:
                seen.add(ko)
                pairs.append((ko, en, f"{part.name}:{n}"))
    matches = closest([ko for ko, _, _ in pairs], held)
    kept, dropped = [], []
    for (ko, en, where), m in zip(pairs, matches):
        if m is not None and m.similarity >= THRESHOLD:
            dropped.append((m.similarity, where, ko, m.train_line, m.source))
        else:
            kept.append((ko, en))
    out = ROOT / "docs" / "training" / "data" / "lecture-domain"
    out.with_suffix(".ko").write_text("".join(k + "\n" for k, _ in kept), encoding="utf-8")
    out.with_suffix(".en").write_text("".join(e + "\n" for _, e in kept), encoding="utf-8")
    print(f"{len(pairs)} pairs read, {len(dropped)} dropped as near duplicates of a fixture "
          f"(3-gram Jaccard >= {THRESHOLD}), {len(kept)} written to {out.relative_to(ROOT)}.ko/.en")
    for sim, where, ko, fx, src in sorted(dropped, reverse=True):
        print(f"  {sim:.2f} {where}: {ko}  ~  {fx}  [{src}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
