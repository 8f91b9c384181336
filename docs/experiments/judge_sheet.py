"""Blind human judgement of translations from several checkpoints on the held-out sentence sets.

``sheet`` writes one TSV a reader fills in, with the outputs of every checkpoint for each sentence
shuffled together and no checkpoint names (identical outputs of one sentence are judged once), and a
key file kept away from the reader. ``score`` reads the filled-in sheet and prints, per checkpoint and
per fixture file, how many outputs were judged acceptable.

    python -m core check --checkpoint A --lecture tests/fixtures/fresh_lecture.tsv \\
        tests/fixtures/fresh_everyday.tsv --json runs/eval/A.json        # the same for B
    python docs/experiments/judge_sheet.py sheet runs/eval/A.json runs/eval/B.json --out runs/judge
    #   a reader fills column "acceptable" of runs/judge/sheet.tsv with y or n
    python docs/experiments/judge_sheet.py score runs/judge

The blind evaluation set: ``--lecture tests/fixtures/blind_*.tsv`` for ``check`` and
``--fixtures tests/fixtures/blind_*.tsv`` for ``sheet``.

Acceptable means: a reader of the English alone gets the meaning of the Korean (no clause, quantity,
place, time, negation or name lost or changed), in understandable English; small grammar slips allowed.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.evaluation.lecture_check import load_fixture  # noqa: E402

FIXTURES = [ROOT / "tests" / "fixtures" / "fresh_lecture.tsv", ROOT / "tests" / "fixtures" / "fresh_everyday.tsv"]


def sheet(results: list[Path], out: Path, seed: int, fixtures: list[Path] = FIXTURES) -> None:
    refs = {i.source: (p.name, i.targets) for p in fixtures for i in load_fixture(p)}
    rows: dict[tuple[str, str], list[str]] = defaultdict(list)  # (source, output) -> checkpoints
    for path in results:
        data = json.loads(path.read_text(encoding="utf-8"))
        for row in data["lecture"]["rows"]:
            if row["source"] in refs:
                rows[(row["source"], row["output"])].append(path.stem)
    items = list(rows.items())
    random.Random(seed).shuffle(items)
    out.mkdir(parents=True, exist_ok=True)
    lines = ["id\tkorean\treferences\toutput\tacceptable"]
    key = {}
    for n, ((src, hyp), models) in enumerate(items, 1):
        lines.append(f"{n}\t{src}\t{' | '.join(refs[src][1])}\t{hyp}\t")
        key[n] = {"models": models, "set": refs[src][0], "source": src}
    (out / "sheet.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "key.json").write_text(json.dumps(key, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"wrote {out / 'sheet.tsv'} ({len(items)} distinct outputs of {len(results)} checkpoints) and {out / 'key.json'}")


def score(folder: Path) -> None:
    key = json.loads((folder / "key.json").read_text(encoding="utf-8"))
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for line in (folder / "sheet.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        cols = line.split("\t")
        verdict = cols[4].strip().lower() if len(cols) > 4 else ""
        if verdict not in ("y", "n"):
            raise SystemExit(f"id {cols[0]}: acceptable must be y or n, got {verdict!r}")
        entry = key[cols[0]]
        for model in entry["models"]:
            for group in (entry["set"], "all"):
                counts[(model, group)][0] += verdict == "y"
                counts[(model, group)][1] += 1
    for (model, group), (ok, total) in sorted(counts.items()):
        print(f"{model:30s} {group:20s} {ok:4d} / {total:4d} acceptable ({100 * ok / total:.0f}%)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sheet")
    s.add_argument("results", nargs="+", type=Path, help="check --json files, one per checkpoint")
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument(
        "--fixtures",
        nargs="+",
        type=Path,
        default=FIXTURES,
        help="the sentence sets judged (default the fresh lecture and everyday sets)",
    )
    c = sub.add_parser("score")
    c.add_argument("folder", type=Path)
    args = ap.parse_args()
    if args.cmd == "sheet":
        sheet(args.results, args.out, args.seed, args.fixtures)
    else:
        score(args.folder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
