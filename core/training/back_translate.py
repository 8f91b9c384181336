"""Back-translation (Sennrich et al., 2016): English monolingual text → synthetic Korean sources.

An English→Korean checkpoint (trained with ``python -m core train --reverse``) greedy-translates each
English line (batched, :func:`core.evaluation.evaluate.translate_corpus`); the pair
(synthetic Korean, original English) becomes Korean→English training data, so the decoder learns from
real English while the encoder sees the reverse model's Korean.

A pair is kept only when the output looks like a translation (:func:`keep_pair`): it has Hangul, it
does not loop, and its length is in proportion to the English. Work goes in chunks appended to
``OUT.ko``/``OUT.en``; re-running the same command continues after the last whole chunk.

    python -m core.training.back_translate --checkpoint runs/bt-enko/best --input runs/data/mono.en \\
        --out runs/data/bt-mono [--chunk 2000] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import torch

from core.checkpoints.checkpoint import load_checkpoint
from core.evaluation.evaluate import translate_corpus
from core.textio import read_lines

_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def keep_pair(ko: str, en: str, min_ratio: float = 0.15, max_ratio: float = 1.5) -> bool:
    """Whether a back-translated pair is kept: ``ko`` holds Hangul, has no decoding loop (a word 3 or
    more times in a row, or a Hangul syllable 3 times in a row: "자주 자주 자주", "직원원원"), and
    ``len(ko) / len(en)`` in characters is within
    [``min_ratio``, ``max_ratio``] (Korean runs about 0.3–0.6 of English's length in characters)."""
    if not ko.strip() or not _HANGUL.search(ko):
        return False
    if re.search(r"(\S+)(?: \1){2,}", ko) or re.search(r"([\uac00-\ud7a3])\1\1", ko):
        return False
    return min_ratio <= len(ko) / max(len(en), 1) <= max_ratio


def back_translate(
    checkpoint: str, lines: list[str], out: str | Path, chunk: int = 2000, batch_size: int = 64, keep=keep_pair
) -> dict:
    """Translate ``lines`` (English) with the English→Korean ``checkpoint`` into ``OUT.ko``/``OUT.en``.

    Resumable: ``OUT.progress.json`` records how many input lines are done (whole chunks), and the kept
    pairs of each chunk are appended before it is updated. ``keep(ko, en)`` decides which pairs are
    written (default :func:`keep_pair`). Returns ``{"done", "kept", "total"}``.

    Raises:
        FileNotFoundError: the checkpoint directory is missing (from :func:`load_checkpoint`).
    """
    out = Path(out)
    ko_path, en_path, prog_path = (out.with_name(out.name + s) for s in (".ko", ".en", ".progress.json"))
    progress = json.loads(prog_path.read_text()) if prog_path.is_file() else {"done": 0, "kept": 0}
    done, kept = progress["done"], progress["kept"]
    # back to the last recorded chunk: a stop between the appends and the progress file leaves
    # lines of a chunk that will be translated again
    for path in (ko_path, en_path):
        old = read_lines(path)[:kept] if kept and path.is_file() else []
        path.write_text("".join(x + "\n" for x in old), encoding="utf-8")
    ckpt = load_checkpoint(checkpoint, device="cpu")
    for start in range(done, len(lines), chunk):
        src = lines[start : start + chunk]
        hyp = translate_corpus(ckpt, src, batch_size=batch_size)
        pairs = [(k, e) for k, e in zip(hyp, src) if keep(k, e)]
        with ko_path.open("a", encoding="utf-8") as fk, en_path.open("a", encoding="utf-8") as fe:
            fk.writelines(k + "\n" for k, _ in pairs)
            fe.writelines(e + "\n" for _, e in pairs)
        kept += len(pairs)
        done = min(start + chunk, len(lines))
        prog_path.write_text(json.dumps({"done": done, "kept": kept, "total": len(lines)}))
        print(f"{done}/{len(lines)} lines, {kept} pairs kept", flush=True)
    return {"done": done, "kept": kept, "total": len(lines)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", required=True, help="English→Korean checkpoint directory (train --reverse)")
    ap.add_argument("--input", required=True, help="English text, one sentence per line")
    ap.add_argument("--out", required=True, help="output prefix: writes OUT.ko and OUT.en")
    ap.add_argument("--chunk", type=int, default=2000, help="lines per resumable chunk (default 2000)")
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0 = torch's default)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    result = back_translate(args.checkpoint, [x.strip() for x in read_lines(args.input) if x.strip()], args.out, args.chunk)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
