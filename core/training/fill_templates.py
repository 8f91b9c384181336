"""Fill bilingual sentence templates with random numbers, times, prices, sizes, years and invented
Latin names, the same value on both sides, so that a model learns to carry such strings across
unchanged ("오후 3시 37분" ↔ "3:37 p.m.", "1,200달러" ↔ "$1,200", "128GB" ↔ "128GB").

A template line is ``Korean<TAB>English`` with slots ``{TIME_KO}``/``{TIME_EN}`` (a pair), ``{N}``,
``{D}``, ``{SIZE}``, ``{PRICE}``, ``{YEAR}``, ``{NAME}``, ``{TITLE}``, ``{PERSON}``. Names and titles are
made from random syllables and words, never taken from a list of real products, so no evaluation
string can be memorised from here.

    python -m core.training.fill_templates docs/training/data/templates.tsv --variants 20 --seed 5 \\
        --exclude tests/fixtures/*.tsv --out runs/data/templates-filled      # writes .ko and .en

``--exclude`` drops every template one of whose filled sentences is a near duplicate of a fixture
line (3-gram Jaccard >= 0.5, :mod:`core.evaluation.overlap`), so no evaluation frame is trained on.
"""

from __future__ import annotations

import argparse
import random
import re
from pathlib import Path
from typing import cast

from core.evaluation.overlap import closest, read_eval
from core.textio import read_lines

SLOT = re.compile(r"\{(TIME_KO|TIME_EN|N|D|SIZE|PRICE|YEAR|NAME|TITLE|PERSON)\}")
PERIODS = [("오전", "a.m."), ("오후", "p.m."), ("저녁", "p.m."), ("밤", "p.m."), ("새벽", "a.m.")]
PERIOD_HOURS = {"오전": range(6, 12), "오후": range(1, 6), "저녁": range(6, 10), "밤": range(9, 12), "새벽": range(1, 6)}
UNITS = ["GB", "MB", "TB", "kg", "g", "ml", "mm", "cm", "km", "W", "mAh", "Hz"]
WORDS = (
    "river light quiet harbor winter stone garden paper moon silver road north song glass city letter "
    "empty blue house last summer machine small forest distant signal ocean morning secret island clock "
    "golden window broken orange storm little field hidden bridge"
).split()
SYLLABLES = "ka ri to ven zor mi lu pex an tra no vi sel qua dor ex fin ro ly gen bo tek".split()
FIRST = (
    "Maria Tomas Elena Jonas Sofia Daniel Nora Lucas Ines Oliver Clara Mateo Hanna Felix Alma Victor "
    "Rosa Emil Ida Leon Greta Hugo Lena Pablo Ada Oskar Iris Milo Vera Amir"
).split()


def _grouped(n: int) -> str:
    return f"{n:,}"


def _name(rng: random.Random) -> str:
    stem = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()
    shape = rng.randrange(5)
    if shape == 0:
        return f"{stem} {rng.randint(2, 99)}"
    if shape == 1:
        return f"{stem} {rng.choice('XSAGZ')}{rng.randint(2, 99)}"
    if shape == 2:
        return f"{stem}-{rng.randint(2, 999)}"
    if shape == 3:
        return f"{stem} {rng.randint(2, 20)} {rng.choice(['Pro', 'Max', 'Plus', 'Mini', 'Air'])}"
    return f"{stem[:3].upper()}-{rng.randint(2, 12)}"


def _title(rng: random.Random) -> str:
    words = rng.sample(WORDS, rng.randint(2, 4))
    return " ".join(["The", *[w.capitalize() for w in words]] if rng.random() < 0.5 else [w.capitalize() for w in words])


def draw(rng: random.Random) -> dict[str, str]:
    """One random value per slot (the time as a Korean/English pair)."""
    period, ampm = rng.choice(PERIODS)
    hour, minute = rng.choice(list(PERIOD_HOURS[period])), rng.choice([m for m in range(1, 60) if m % 5])
    n = rng.choice([rng.randint(10, 99), rng.randint(100, 999), rng.randint(1000, 9999)])
    d = f"{rng.randint(0, 99)}.{rng.randint(1, 9)}" if rng.random() < 0.7 else f"{rng.randint(0, 9)}.{rng.randint(11, 99)}"
    price = rng.choice([rng.randint(10, 999), rng.randint(1000, 99999), rng.randint(100, 999) * 100])
    return {
        "TIME_KO": f"{period} {hour}시 {minute}분",
        "TIME_EN": f"{hour}:{minute:02d} {ampm}",
        "N": _grouped(n),
        "D": d,
        "SIZE": f"{rng.choice([2, 4, 8, 16, 24, 32, 64, 128, 256, 500, 512, 750])}{rng.choice(UNITS)}",
        "PRICE": _grouped(price),
        "YEAR": str(rng.randint(1950, 2035)),
        "NAME": _name(rng),
        "TITLE": _title(rng),
        "PERSON": rng.choice(FIRST),
    }


def fill(template: str, values: dict[str, str]) -> str:
    return SLOT.sub(lambda m: values[m.group(1)], template)


def fill_all(templates: list[tuple[str, str]], variants: int, seed: int) -> list[tuple[str, str]]:
    """``variants`` filled pairs per template (``Korean``, ``English``), deterministic for ``seed``.

    Raises:
        ValueError: a template whose two sides hold different slots (named with its text).
    """
    rng = random.Random(seed)
    out = []
    for ko, en in templates:
        slots_ko = {s.replace("TIME_KO", "TIME") for s in SLOT.findall(ko)}
        slots_en = {s.replace("TIME_EN", "TIME") for s in SLOT.findall(en)}
        if slots_ko != slots_en or not slots_ko:
            raise ValueError(f"template slots differ or are missing: {ko!r} / {en!r}")
        for _ in range(variants):
            values = draw(rng)
            out.append((fill(ko, values), fill(en, values)))
    return out


def drop_near(
    templates: list[tuple[str, str]], pairs: list[tuple[str, str]], variants: int, fixtures: list[str], threshold: float = 0.5
) -> tuple[list[tuple[str, str]], list[str]]:
    """``pairs`` without the variants of any template that produced a sentence within
    ``threshold`` (3-gram Jaccard) of a fixture line; returns (kept pairs, dropped templates)."""
    held = [(line, Path(f).name) for f in fixtures for line in read_eval(f)]
    near = {i // variants for i, m in enumerate(closest([k for k, _ in pairs], held)) if m and m.similarity >= threshold}
    kept = [p for i, p in enumerate(pairs) if i // variants not in near]
    return kept, [templates[t][0] for t in sorted(near)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("templates", help="Korean<TAB>English template file")
    ap.add_argument("--variants", type=int, default=20, help="filled pairs per template (default 20)")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--out", required=True, help="output PREFIX (writes PREFIX.ko and PREFIX.en)")
    ap.add_argument("--exclude", nargs="*", default=[], help="fixture files whose near duplicates are dropped")
    args = ap.parse_args(argv)
    templates = [cast(tuple[str, str], tuple(x.split("\t"))) for x in read_lines(args.templates) if x.strip()]
    pairs = fill_all(templates, args.variants, args.seed)
    if args.exclude:
        pairs, dropped = drop_near(templates, pairs, args.variants, args.exclude)
        for t in dropped:
            print(f"dropped (near a fixture line): {t}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(f"{args.out}.ko").write_text("".join(k + "\n" for k, _ in pairs), encoding="utf-8")
    Path(f"{args.out}.en").write_text("".join(e + "\n" for _, e in pairs), encoding="utf-8")
    print(f"wrote {len(pairs)} pairs from {len(templates)} templates to {args.out}.ko/.en")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
