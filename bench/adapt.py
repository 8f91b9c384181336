"""Adapting a checkpoint to a lecturer's 20 sentences: time, the 20 afterwards, 20 paraphrases
written beforehand, and held-out Tatoeba chrF before and after.

Adapts ``--checkpoint`` on ``tests/fixtures/adapt_pairs.tsv`` with the default
:class:`AdaptOptions` (``python -m core adapt`` does the same), then translates greedily with the
model before and after: the 20 adapted sources (how many come out as the reference exactly, and
within one word: a word-level edit distance ≤ 1 after lower-casing and dropping punctuation), the
20 paraphrases of ``tests/fixtures/adapt_paraphrases.tsv`` (sacreBLEU chrF against their
references, and how many are within one word) and ``--heldout PREFIX`` (.ko/.en; chrF). Targets:
adapting under 180 s; every pair within one word; chrF on the held-out set down by at most 0.5.

    python -m bench.adapt [--checkpoint checkpoints/ko-en-nc] [--heldout runs/data/tatoeba-ho] [--steps N] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from pathlib import Path

import torch

from core.checkpoints.checkpoint import load_checkpoint
from core.evaluation.evaluate import score, translate_corpus
from core.textio import read_aligned
from core.training.adapt import AdaptOptions, adapt
from core.training.pairs_file import read_pairs

PAIRS = Path("tests/fixtures/adapt_pairs.tsv")
PARAPHRASES = Path("tests/fixtures/adapt_paraphrases.tsv")


def words(text: str) -> list[str]:
    """Lower-cased words without punctuation."""
    return re.findall(r"[\w']+", text.lower())


def word_distance(a: str, b: str) -> int:
    """Levenshtein distance between the word sequences of ``a`` and ``b``."""
    x, y = words(a), words(b)
    prev = list(range(len(y) + 1))
    for i, wx in enumerate(x, start=1):
        cur = [i]
        for j, wy in enumerate(y, start=1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (wx != wy)))
        prev = cur
    return prev[-1]


def measure(ckpt_dir: str, pairs, paraphrases, heldout: tuple[list[str], list[str]] | None) -> dict:
    """Greedy translations of the three sets by the model in ``ckpt_dir`` and their scores."""
    ckpt = load_checkpoint(ckpt_dir, device="cpu")
    out: dict = {}
    for key, items in (("pairs", pairs), ("paraphrases", paraphrases)):
        hyps = translate_corpus(ckpt, [s for s, _ in items])
        dist = [word_distance(h, r) for h, (_, r) in zip(hyps, items)]
        out[key] = {
            "exact": sum(d == 0 for d in dist),
            "within_one_word": sum(d <= 1 for d in dist),
            "chrf": score(hyps, [r for _, r in items])["chrf"],
            "rows": [{"source": s, "reference": r, "output": h, "word_distance": d} for (s, r), h, d in zip(items, hyps, dist)],
        }
    if heldout is not None:
        out["heldout_chrf"] = score(translate_corpus(ckpt, heldout[0]), heldout[1])["chrf"]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m bench.adapt", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--checkpoint", default="checkpoints/ko-en-nc")
    p.add_argument("--heldout", default="runs/data/tatoeba-ho", help="PREFIX of .ko/.en held-out pairs ('' to skip)")
    p.add_argument("--steps", type=int, default=AdaptOptions().steps)
    p.add_argument("--lr-scale", type=float, default=AdaptOptions().lr_scale)
    p.add_argument("--replay", type=float, default=AdaptOptions().replay)
    p.add_argument("--base-weight", type=float, default=AdaptOptions().base_weight)
    p.add_argument("--freeze-embeddings", action="store_true")
    p.add_argument("--replay-own", action="store_true")
    p.add_argument(
        "--threads", type=int, default=1, help="torch threads (default 1: on a shared CPU more threads wait on each other)"
    )
    p.add_argument("--json", default=None, help="write every row and score here")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    pairs, paraphrases = read_pairs(PAIRS), read_pairs(PARAPHRASES)
    heldout = read_aligned(args.heldout + ".ko", args.heldout + ".en") if args.heldout else None
    before = measure(args.checkpoint, pairs, paraphrases, heldout)
    with tempfile.TemporaryDirectory() as tmp:
        opts = AdaptOptions(
            steps=args.steps,
            lr_scale=args.lr_scale,
            replay=args.replay,
            base_weight=args.base_weight,
            train_embeddings=not args.freeze_embeddings,
            replay_own=args.replay_own,
        )
        r = adapt(args.checkpoint, pairs, Path(tmp) / "adapted", "bench-adapted", opts, source=PAIRS.name)
        after = measure(str(r.path), pairs, paraphrases, heldout)
    print(f"adapt: {r.steps} updates in {r.seconds:.1f} s (load and save included); loss {r.losses[0]:.3f} -> {r.losses[-1]:.3f}")
    for key in ("pairs", "paraphrases"):
        b, a = before[key], after[key]
        print(
            f"{key}: exact {b['exact']} -> {a['exact']}, within one word {b['within_one_word']} -> {a['within_one_word']} "
            f"of {len(b['rows'])}; chrF {b['chrf']:.2f} -> {a['chrf']:.2f} ({a['chrf'] - b['chrf']:+.2f})"
        )
    if heldout is not None:
        print(
            f"held-out {Path(args.heldout).name} chrF {before['heldout_chrf']:.2f} -> {after['heldout_chrf']:.2f} "
            f"({after['heldout_chrf'] - before['heldout_chrf']:+.2f})"
        )
    if args.json:
        record = {"seconds": r.seconds, "options": vars(args), "before": before, "after": after}
        Path(args.json).write_text(json.dumps(record, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
