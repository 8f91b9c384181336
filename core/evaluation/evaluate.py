"""Corpus BLEU and chrF with sacreBLEU (Post, 2018), greedy or beam search in length-sorted batches."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from tqdm import tqdm

from core.checkpoints.atomic_io import write_text_atomic
from core.checkpoints.checkpoint import Checkpoint
from core.decoding.strategy import DecodingStrategy, as_strategy
from core.decoding.text_batch import DEFAULT_BATCH_SIZE, translate_texts
from core.textio import read_aligned


def translate_corpus(
    ckpt: Checkpoint,
    sources: list[str],
    beam: int | DecodingStrategy = 1,
    batch_size: int = DEFAULT_BATCH_SIZE,
    alpha: float = 0.6,
    max_tokens: int | None = None,
) -> list[str]:
    """Translate every line, text only; an empty line (or one empty after normalization) gives an
    empty hypothesis. ``beam``: a :class:`DecodingStrategy` or a beam size (1 = greedy). Greedy and
    beam run in length-sorted batches of at most ``batch_size`` sentences and ``max_tokens`` padded
    source positions (:func:`core.decoding.text_batch.translate_texts`); sampling one sentence at a time.

    Raises:
        InputError: the beam size, ``batch_size`` or ``max_tokens`` is out of range
            (:func:`core.decoding.strategy.as_strategy`, :func:`core.decoding.text_batch.length_batches`).
    """
    strategy = as_strategy(beam)
    if strategy.is_sampling:
        out = [""] * len(sources)
        for i in tqdm([i for i, s in enumerate(sources) if ckpt.src_tokenizer.encode(s).ids], desc=str(strategy), mininterval=10):
            best = strategy.search(ckpt.model, ckpt.src_tokenizer, sources[i], alpha=alpha)[0]
            out[i] = ckpt.tgt_tokenizer.decode(best.ids)
        return out
    with tqdm(total=len(sources), desc=str(strategy), mininterval=10) as bar:
        results = translate_texts(ckpt, sources, strategy, batch_size, max_tokens, alpha, progress=bar.update)
    return [r.translation if not r.error else "" for r in results]


def score(hypotheses: list[str], references: list[str]) -> dict:
    """sacreBLEU corpus BLEU and chrF with their signatures."""
    import sacrebleu

    bleu = sacrebleu.metrics.BLEU()
    chrf = sacrebleu.metrics.CHRF()
    b = bleu.corpus_score(hypotheses, [references])
    c = chrf.corpus_score(hypotheses, [references])
    return {
        "bleu": round(b.score, 2),
        "chrf": round(c.score, 2),
        "bleu_signature": str(bleu.get_signature()),
        "chrf_signature": str(chrf.get_signature()),
    }


FINANCE_WORDS = ("shares", "stocks", "nasdaq", "percent", "index", "dow", "investors", "earnings")


def register_counts(hypotheses: list[str], references: list[str], words=FINANCE_WORDS) -> dict[str, list[int]]:
    """``{word: [count in hypotheses, count in references]}`` (whole words, case-insensitive)."""
    out = {}
    for w in words:
        pat = re.compile(rf"\b{w}\b", re.IGNORECASE)
        out[w] = [sum(len(pat.findall(h)) for h in hypotheses), sum(len(pat.findall(r)) for r in references)]
    return out


def evaluate_files(
    ckpt: Checkpoint,
    src: str,
    ref: str,
    beam: int | DecodingStrategy = 1,
    limit: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    max_tokens: int | None = None,
) -> dict:
    """Translate ``src`` (one sentence per line) and score against ``ref``. ``beam``: a
    :class:`DecodingStrategy` or a beam size (1 = greedy); the result's ``beam`` is its beam size;
    ``batch_size`` / ``max_tokens``: see :func:`translate_corpus`; ``seconds``: translation time (s).

    Raises:
        ValueError: the files have different numbers of lines.
        InputError: the beam size is out of range.
    """
    strategy = as_strategy(beam)
    sources, refs = read_aligned(src, ref)  # split on \n only, as sacreBLEU and wc -l count
    if limit is not None:
        if limit < 1:
            raise ValueError(f"--limit must be at least 1, got {limit}")
        sources, refs = sources[:limit], refs[:limit]
    t0 = time.time()
    hyps = translate_corpus(ckpt, sources, beam=strategy, batch_size=batch_size, max_tokens=max_tokens)
    result = score(hyps, refs)
    result["finance_words_hyp_ref"] = register_counts(hyps, refs)
    result.update(
        src=str(src),
        ref=str(ref),
        lines=len(sources),
        beam=strategy.beam_size,
        seconds=round(time.time() - t0, 1),
        batch_size=batch_size,
        checkpoint=str(ckpt.path),
    )
    return result | {"hypotheses_sample": hyps[:5]}


def write_json(result: dict, path: str) -> None:
    """Add ``result`` to the ``results`` list in ``path`` (replacing the entry for the same test
    file and beam), so one eval.json collects every evaluation of a checkpoint."""
    p = Path(path)
    data: dict[str, list] = {"results": []}
    if p.exists():
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            pass
    rows = [r for r in data.get("results", []) if (r.get("src"), r.get("beam")) != (result["src"], result["beam"])]
    rows.append(result)
    data["results"] = sorted(rows, key=lambda r: (r["src"], r["beam"]))
    write_text_atomic(p, json.dumps(data, indent=2, ensure_ascii=False) + "\n")  # a full disk names the file
