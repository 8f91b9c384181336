"""The checks that decide whether a model can be shown in a lecture (a model that gets a
lecturer's sentences right), beside corpus BLEU/chrF:

- **lecture sentences**: everyday Korean sentences with one or more accepted English
  translations; an output is *acceptable* when it equals one of them after :func:`normalize`.
- **copy check**: sentences with numbers, Latin-script names, prices, times, file names and
  URLs; each listed string must appear verbatim in the output (case-sensitive).

Fixtures are tab-separated: ``Korean<TAB>a | b | c``; lines starting with ``#`` are comments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from core.checkpoints.checkpoint import Checkpoint
from core.decoding.strategy import DecodingStrategy, as_strategy
from core.evaluation.evaluate import translate_corpus
from core.textio import read_lines

# The default fixtures live in a source checkout, which `python -m core check` runs from (relative to
# the current directory, like python -m bench); an installed wheel has none and asks for --lecture/--copy.
FIXTURES = Path("tests") / "fixtures"
LECTURE_FIXTURE = FIXTURES / "lecture_sentences.tsv"
COPY_FIXTURE = FIXTURES / "copy_check.tsv"

_CONTRACTIONS = [
    (r"\bcan't\b", "can not"),
    (r"\bcannot\b", "can not"),
    (r"\bwon't\b", "will not"),
    (r"n't\b", " not"),
    (r"'m\b", " am"),
    (r"'re\b", " are"),
    (r"'s\b", " is"),
    (r"'ve\b", " have"),
    (r"'ll\b", " will"),
    (r"'d\b", " would"),
]


@dataclass
class FixtureItem:
    """One fixture line: the Korean ``source`` and its accepted outputs or must-copy strings."""

    source: str
    targets: list[str]


def load_fixture(path: str | Path) -> list[FixtureItem]:
    """Read a ``Korean<TAB>a | b`` fixture. Raises ValueError on a line without a tab or targets."""
    items = []
    for n, line in enumerate(read_lines(path), 1):
        if not line.strip() or line.startswith("#"):
            continue
        if "\t" not in line:
            raise ValueError(f"{path}:{n}: expected Korean<TAB>targets")
        src, tgt = line.split("\t", 1)
        targets = [t.strip() for t in tgt.split(" | ") if t.strip()]
        if not targets:
            raise ValueError(f"{path}:{n}: no targets")
        items.append(FixtureItem(src.strip(), targets))
    return items


def normalize(text: str) -> str:
    """Lower-case, unify apostrophes, expand contractions, drop punctuation, collapse spaces:
    "I'm a student." and "i am a student" both become "i am a student"."""
    t = text.lower().replace("’", "'").replace("‘", "'")
    for pattern, repl in _CONTRACTIONS:
        t = re.sub(pattern, repl, t)
    t = re.sub(r"[^\w\s-]", " ", t)
    return " ".join(t.split())


def acceptable(hypothesis: str, references: list[str]) -> bool:
    """True when ``hypothesis`` equals one accepted reference after :func:`normalize`."""
    h = normalize(hypothesis)
    return any(h == normalize(r) for r in references)


def _whole(hypothesis: str, s: str) -> bool:
    """``s`` occurs in ``hypothesis`` and is not glued to more of its own kind: a string that
    starts (ends) with a digit must not have a digit before (after) it, one that starts (ends) with a
    letter must not have a letter there. So "80" is not found in "800B", nor "15" in "150", while
    "GB" is found in "80GB" and "1,350" in "$1,350"."""

    def same_kind(a: str, b: str) -> bool:
        return (a.isdigit() and b.isdigit()) or (a.isalpha() and b.isalpha())

    start = hypothesis.find(s)
    while start >= 0:
        end = start + len(s)
        before = hypothesis[start - 1] if start else ""
        after = hypothesis[end] if end < len(hypothesis) else ""
        if not (before and same_kind(before, s[0])) and not (after and same_kind(after, s[-1])):
            return True
        start = hypothesis.find(s, start + 1)
    return False


def copied(hypothesis: str, strings: list[str]) -> list[bool]:
    """For each must-copy string, whether it appears verbatim (case-sensitive) in ``hypothesis``
    as a whole token (see :func:`_whole`)."""
    return [_whole(hypothesis, s) for s in strings]


def _load_all(paths: str | Path | list) -> list[FixtureItem]:
    return [i for p in (paths if isinstance(paths, list) else [paths]) for i in load_fixture(p)]


def run_checks(
    ckpt: Checkpoint,
    beam: int | DecodingStrategy = 1,
    lecture: str | Path | list = LECTURE_FIXTURE,
    copy: str | Path | list = COPY_FIXTURE,
) -> dict:
    """Translate both fixtures with ``ckpt`` and score them (``lecture`` and ``copy`` may each be
    a list of fixture files, read one after the other). ``beam``: a :class:`DecodingStrategy` or
    a beam size (1 = greedy; InputError when out of range).

    Returns a dict with ``lecture`` (acceptable count, total, rate, sentence-set chrF, per-item
    rows) and ``copy`` (strings copied, total, rate, per-item rows).
    """
    import sacrebleu

    strategy = as_strategy(beam)
    lec = _load_all(lecture)
    hyps = translate_corpus(ckpt, [i.source for i in lec], beam=strategy)
    ok = [acceptable(h, i.targets) for h, i in zip(hyps, lec)]
    refs = [i.targets[0] for i in lec]
    chrf = sacrebleu.metrics.CHRF().corpus_score(hyps, [refs]).score
    cp = _load_all(copy)
    chyps = translate_corpus(ckpt, [i.source for i in cp], beam=strategy)
    hits = [copied(h, i.targets) for h, i in zip(chyps, cp)]
    n_hit, n_all = sum(sum(h) for h in hits), sum(len(h) for h in hits)
    return {
        "checkpoint": str(ckpt.path),
        "beam": strategy.beam_size,
        "lecture": {
            "acceptable": sum(ok),
            "total": len(lec),
            "rate": round(sum(ok) / len(lec), 3),
            "chrf_first_reference": round(chrf, 2),
            "rows": [{"source": i.source, "output": h, "acceptable": a} for i, h, a in zip(lec, hyps, ok)],
        },
        "copy": {
            "copied": n_hit,
            "total": n_all,
            "rate": round(n_hit / n_all, 3),
            "rows": [
                {"source": i.source, "output": h, "missing": [s for s, k in zip(i.targets, hit) if not k]}
                for i, h, hit in zip(cp, chyps, hits)
            ],
        },
    }
