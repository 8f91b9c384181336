"""Beam-search error scan: ``python -m bench.beam_scan --src FILE [--n 150] [--beams 1,2,4,8]``.

For each of the first N lines of ``--src`` (one Korean sentence a line, e.g.
``../shared/corpus/test/tatoeba-test.ko``) it decodes greedily and with each beam size, and scores
every output with :func:`core.decoding.beam.sequence_score` (log P(Y | X) / lp(Y), the GNMT length
penalty, one teacher-forced pass), so all outputs are compared under the search's own objective.

Reported per beam size k > 1:
- ``below_greedy``: sentences whose beam-k output scores below the greedy output;
- ``below_narrower``: sentences whose beam-k output scores below the output of a narrower beam
  size > 1 in the scan, i.e. the search got worse as the beam grew;
- ``below_any_narrower``: the same with greedy counted as the narrowest beam.
Totals: (sentence, beam) cases below greedy, and sentences that get worse as the beam grows
(any wider beam below a narrower one, beam sizes > 1).
Scores are compared with a tolerance of ``--tol`` (default 1e-4) to ignore float noise between the
cached search and the one-pass rescoring. Prints a markdown table and, last, one JSON line.
The corpus is read only here, from the path given; the app never reads it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path


def greedy_ids(ckpt, text: str) -> tuple[list[int], bool]:
    """The app's greedy output for ``text``: ids without EOS, and whether it ended with EOS."""
    from core.decoding.session import DecodeSession

    session = DecodeSession(ckpt.model, ckpt.src_tokenizer, ckpt.tgt_tokenizer, text)
    session.run()
    ids = session.output_ids
    ended = not session.truncated
    return (ids[:-1] if ended else ids), ended


def scan(ckpt, texts: list[str], beams: list[int], alpha: float = 0.6, tol: float = 1e-4, plain: bool = False) -> dict:
    """Decode ``texts`` with every size in ``beams`` (1 = greedy); return per-sentence scores and
    per-beam counts (see module docstring). ``plain``: beam search without the greedy hypothesis
    competing (``keep_greedy=False``), to measure the search alone."""
    from core.decoding.beam import beam_search, sequence_score
    from core.decoding.session import prepare_source

    c = ckpt.config
    rows = []
    for text in texts:
        src = prepare_source(text, ckpt.src_tokenizer, c.max_len, c.eos_id, c.pad_id).ids
        scores, outputs = {}, {}
        for k in beams:
            if k == 1:
                ids, ended = greedy_ids(ckpt, text)
            else:
                best = beam_search(ckpt.model, ckpt.src_tokenizer, text, beam=k, alpha=alpha, keep_greedy=not plain)[0]
                ids, ended = best.ids, not best.truncated
            scores[k] = sequence_score(ckpt.model, src, ids, alpha, eos=ended)
            outputs[k] = ckpt.tgt_tokenizer.decode(ids)
        rows.append({"source": text, "scores": scores, "outputs": outputs})
    return summarize(rows, beams, tol)


def summarize(rows: list[dict], beams: list[int], tol: float = 1e-4) -> dict:
    """Per-beam counts from per-sentence ``scores`` ({beam: score}); see the module docstring."""
    per_beam = {}
    for i, k in enumerate(beams):
        if k == 1:
            continue
        narrower = beams[:i]
        below_g = [r for r in rows if 1 in r["scores"] and r["scores"][k] < r["scores"][1] - tol]
        below_n = [r for r in rows if any(r["scores"][k] < r["scores"][j] - tol for j in narrower if j > 1)]
        below_a = [r for r in rows if any(r["scores"][k] < r["scores"][j] - tol for j in narrower)]
        per_beam[k] = {
            "below_greedy": len(below_g),
            "below_narrower": len(below_n),
            "below_any_narrower": len(below_a),
            "mean_score": sum(r["scores"][k] for r in rows) / len(rows),
        }
    wide = [b for b in beams if b > 1]
    worse = [r for r in rows if any(r["scores"][b] < r["scores"][a] - tol for i, a in enumerate(wide) for b in wide[i + 1 :])]
    return {
        "rows": rows,
        "per_beam": per_beam,
        "sentences_worse_with_wider_beam": len(worse),
        "cases_below_greedy": sum(v["below_greedy"] for v in per_beam.values()),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m bench.beam_scan", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--src", help="source sentences, one per line (e.g. tatoeba-test.ko)")
    p.add_argument("--from-json", default=None, help="recount a saved --json run instead of decoding")
    p.add_argument("--n", type=int, default=150, help="first N non-empty lines (default 150)")
    p.add_argument("--beams", default="1,2,4,8", help="comma-separated beam sizes, ascending (1 = greedy)")
    p.add_argument("--alpha", type=float, default=0.6, help="GNMT length-penalty alpha (default 0.6)")
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--checkpoint", default=None, help="default: the shipped checkpoint")
    p.add_argument("--examples", type=int, default=5, help="print this many worst search errors")
    p.add_argument("--plain", action="store_true", help="beam search alone: keep_greedy=False")
    p.add_argument("--json", default=None, help="also write the full per-sentence results here")
    args = p.parse_args(argv)
    from core.checkpoints.checkpoint import load_checkpoint
    from core.defaults import DEFAULT_CHECKPOINT

    if args.from_json:
        saved = json.loads(Path(args.from_json).read_text(encoding="utf-8"))
        rows = [r | {"scores": {int(k): v for k, v in r["scores"].items()}} for r in saved["rows"]]
        beams = sorted(rows[0]["scores"])
        result = summarize(rows, beams, args.tol)
        print(f"recounted {args.from_json} ({len(rows)} sentences, commit {saved.get('commit')})")
        print(json.dumps({k: result[k] for k in ("per_beam", "cases_below_greedy", "sentences_worse_with_wider_beam")}))
        return 0
    if not args.src:
        print("error: --src is required (or --from-json)", file=sys.stderr)
        return 2
    try:
        beams = sorted({int(b) for b in args.beams.split(",")})
        lines = Path(args.src).read_text(encoding="utf-8").splitlines()
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not beams or beams[0] < 1:
        print("error: beam sizes must be >= 1", file=sys.stderr)
        return 2
    texts = [t for t in lines if t.strip()][: args.n]
    ckpt = load_checkpoint(args.checkpoint or DEFAULT_CHECKPOINT, device="cpu")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "core/decoding/beam.py"], capture_output=True, text=True
    ).stdout.strip()
    commit = (commit or "?") + (" + uncommitted beam.py" if dirty else "")
    t0 = time.perf_counter()
    result = scan(ckpt, texts, beams, args.alpha, args.tol, args.plain)
    seconds = time.perf_counter() - t0
    print(
        f"{len(texts)} sentences from {args.src}, alpha {args.alpha}, commit {commit}"
        f"{', plain search (keep_greedy=False)' if args.plain else ''}, {seconds:.0f} s"
    )
    print(
        "| beam | mean score | below greedy | below a narrower beam (> 1) | below any narrower (greedy incl.) |\n"
        "|---|---|---|---|---|"
    )
    for k, v in result["per_beam"].items():
        print(f"| {k} | {v['mean_score']:.4f} | {v['below_greedy']} | {v['below_narrower']} | {v['below_any_narrower']} |")
    print(
        f"(sentence, beam) cases below greedy: {result['cases_below_greedy']}; "
        f"sentences that get worse as the beam grows: {result['sentences_worse_with_wider_beam']}"
    )
    errs = sorted(
        ((r["scores"][1] - r["scores"][k], k, r) for r in result["rows"] for k in beams if k > 1 and 1 in beams),
        key=lambda x: -x[0],
    )
    for gap, k, r in errs[: args.examples]:
        if gap <= args.tol:
            break
        print(f"  beam {k} {r['scores'][k]:.3f} < greedy {r['scores'][1]:.3f}: {r['source']}")
    summary = {
        "sentences": len(texts),
        "alpha": args.alpha,
        "commit": commit,
        "plain": args.plain,
        "seconds": round(seconds, 1),
        "per_beam": result["per_beam"],
        "cases_below_greedy": result["cases_below_greedy"],
        "sentences_worse_with_wider_beam": result["sentences_worse_with_wider_beam"],
    }
    if args.json:
        Path(args.json).write_text(
            json.dumps(summary | {"rows": result["rows"]}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
        )
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
