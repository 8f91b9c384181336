"""Calibrate the low-confidence flag (core/decoding/confidence.py) on held-out sentences judged by a reader.

``sheet`` translates the sentences of fixture files (greedy, as the app) and writes one TSV with each
output and its sentence score (mean log-probability per token, nats), plus an empty ``acceptable``
column for a reader, who judges without seeing the scores (``reader.tsv`` leaves them out). ``fit``
reads the judged sheet and prints how well the score separates acceptable from not: the area under
the ROC curve, and for each candidate threshold the share of not-acceptable outputs flagged (recall)
and of flagged outputs that are not acceptable (precision); the threshold that maximises Youden's J
(recall of the bad + recall of the good − 1) is the one to ship.

    python docs/experiments/calibrate_confidence.py sheet --checkpoint checkpoints/ko-en-nc \\
        tests/fixtures/fresh_lecture.tsv tests/fixtures/fresh_everyday.tsv --out runs/confidence
    #   a reader fills column "acceptable" of runs/confidence/reader.tsv with y or n
    python docs/experiments/calibrate_confidence.py fit runs/confidence [more judged folders …]

``from-sheet`` reuses a blind judgement made with docs/experiments/judge_sheet.py (its ``sheet.tsv``
with verdicts and ``key.json``): the outputs of one model in it are translated again to get their
scores (those that no longer come out exactly as judged are left out and listed) and written as a folder ``fit`` reads::

    python docs/experiments/calibrate_confidence.py from-sheet docs/experiments/blind-judge-stage11 \
        --model stage11 --checkpoint checkpoints/ko-en-nc --out docs/experiments/confidence-stage11-blind
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.evaluation.lecture_check import load_fixture  # noqa: E402

SCORES_HEADER = "id\tset\tkorean\treferences\toutput\tconfidence"
READER_HEADER = "id\tkorean\treferences\toutput\tacceptable"


def _write(out: Path, rows: list[str], reader: list[str]) -> None:
    """``out/scores.tsv`` (with the scores) and ``out/reader.tsv`` (without: what a reader judges)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "scores.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (out / "reader.tsv").write_text("\n".join(reader) + "\n", encoding="utf-8")


def sheet(checkpoint: str, fixtures: list[Path], out: Path) -> None:
    from core.checkpoints.checkpoint import load_checkpoint
    from core.decoding.translate import translate

    ck = load_checkpoint(checkpoint, device="cpu")
    rows, reader = [SCORES_HEADER], [READER_HEADER]
    n = 0
    for path in fixtures:
        for item in load_fixture(path):
            n += 1
            r = translate(ck, item.source)
            refs = " | ".join(item.targets)
            rows.append(f"{n}\t{path.name}\t{item.source}\t{refs}\t{r.translation}\t{r.confidence:.4f}")
            reader.append(f"{n}\t{item.source}\t{refs}\t{r.translation}\t")
    _write(out, rows, reader)
    print(f"wrote {out / 'scores.tsv'} and {out / 'reader.tsv'} ({n} sentences)")


def from_sheet(judged: Path, model: str, checkpoint: str, out: Path) -> None:
    import json

    from core.checkpoints.checkpoint import load_checkpoint
    from core.decoding.translate import translate

    key = json.loads((judged / "key.json").read_text(encoding="utf-8"))
    ck = load_checkpoint(checkpoint, device="cpu")
    rows, reader = [SCORES_HEADER], [READER_HEADER]
    skipped: list[str] = []
    for line in (judged / "sheet.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        sid, korean, refs, output, verdict = line.split("\t")[:5]
        if model not in key[sid]["models"]:
            continue
        r = translate(ck, korean)
        if r.translation != output:  # judged from a batched run: a near tie can go the other way alone
            skipped.append(sid)
            continue
        rows.append(f"{sid}\t{key[sid]['set']}\t{korean}\t{refs}\t{output}\t{r.confidence:.4f}")
        reader.append(f"{sid}\t{korean}\t{refs}\t{output}\t{verdict}")
    _write(out, rows, reader)
    print(f"wrote {out / 'scores.tsv'} and {out / 'reader.tsv'} ({len(rows) - 1} judged outputs of {model})")
    if skipped:
        print(f"left out {len(skipped)} whose output differs when translated alone (as the app does): ids {' '.join(skipped)}")


def fit(folders: list[Path]) -> None:
    """Print the AUROC and the best threshold over the judged outputs of ``folders``; a sentence
    judged in several folders counts once, with the verdict and score of the last folder."""
    judged: dict[str, tuple[float, bool]] = {}  # Korean sentence -> (score, acceptable)
    for folder in folders:
        scores = {}
        for line in (folder / "scores.tsv").read_text(encoding="utf-8").splitlines()[1:]:
            cols = line.split("\t")
            scores[cols[0]] = (cols[2], float(cols[5]))
        for line in (folder / "reader.tsv").read_text(encoding="utf-8").splitlines()[1:]:
            cols = line.split("\t")
            verdict = cols[4].strip().lower() if len(cols) > 4 else ""
            if verdict not in ("y", "n"):
                raise SystemExit(f"{folder} id {cols[0]}: acceptable must be y or n, got {verdict!r}")
            korean, score = scores[cols[0]]
            judged[korean] = (score, verdict == "y")
    pairs = list(judged.values())
    good = [s for s, ok in pairs if ok]
    bad = [s for s, ok in pairs if not ok]
    if not good or not bad:
        raise SystemExit("need both acceptable and not acceptable outputs to calibrate")
    # AUROC: the chance that an acceptable output scores above a not-acceptable one (ties count half)
    auc = sum((g > b) + 0.5 * (g == b) for g in good for b in bad) / (len(good) * len(bad))
    print(f"{len(pairs)} judged outputs: {len(good)} acceptable, {len(bad)} not; AUROC of the score {auc:.3f}")
    print(f"mean score: acceptable {sum(good) / len(good):.3f}, not acceptable {sum(bad) / len(bad):.3f} nats/token")
    best = None
    for t in sorted({round(s, 2) for s, _ in pairs}):
        flagged = [(s, ok) for s, ok in pairs if s < t]
        bad_flagged = sum(not ok for _, ok in flagged)
        recall = bad_flagged / len(bad)
        specificity = sum(s >= t for s in good) / len(good)
        precision = bad_flagged / len(flagged) if flagged else float("nan")
        j = recall + specificity - 1
        if best is None or j > best[0]:
            best = (j, t, recall, precision, specificity, len(flagged))
    j, t, recall, precision, spec, n_flag = best
    print(
        f"best threshold (Youden's J {j:.3f}): flag below {t:.2f} nats/token: {n_flag} flagged, "
        f"{recall:.0%} of the not-acceptable flagged, {precision:.0%} of the flagged not acceptable, "
        f"{spec:.0%} of the acceptable left unflagged"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sheet")
    s.add_argument("fixtures", nargs="+", type=Path)
    s.add_argument("--checkpoint", required=True)
    s.add_argument("--out", type=Path, required=True)
    j = sub.add_parser("from-sheet")
    j.add_argument("judged", type=Path)
    j.add_argument("--model", required=True)
    j.add_argument("--checkpoint", required=True)
    j.add_argument("--out", type=Path, required=True)
    f = sub.add_parser("fit")
    f.add_argument("folders", type=Path, nargs="+")
    args = ap.parse_args()
    if args.cmd == "sheet":
        sheet(args.checkpoint, args.fixtures, args.out)
    elif args.cmd == "from-sheet":
        from_sheet(args.judged, args.model, args.checkpoint, args.out)
    else:
        fit(args.folders)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
