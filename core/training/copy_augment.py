"""Copy augmentation: teach the model to copy numbers, Latin-script names and strings.

A small model trained on ~100k pairs rarely sees the same string on both sides, so it learns to
*translate* "2024" or "Python" into whatever number or word is frequent ("I was 200 years old").
This module writes extra training pairs made from real ones:

* **shared-string swap** — a pair whose Korean and English sides share a string (``2003``,
  ``3:30``, ``15,000``, ``TV``, ``GitHub``, ``https://…``) gets that string replaced, on both
  sides, by a random string of the same shape (digits by digits with the same grouping, a time
  by a time, a Latin word by a Latin name, a URL/e-mail/file name by another one);
* **name swap** — a pair with a transliterated name on the Korean side and its English name
  (톰 ↔ Tom, 메리 ↔ Mary, 보스턴 ↔ Boston …) gets both replaced by the *same Latin-script*
  string, so the Korean side reads "Anna는 …" as in real code-switched text.

The sentence frames stay natural; only the copyable strings change. Output lines are plain
``.ko``/``.en`` files for ``python -m core train --train PATH*W``. Deterministic for a seed.
"""

from __future__ import annotations

import argparse
import random
import re
from pathlib import Path

from core.textio import read_aligned, read_lines
from core.training.copy_shapes import _digits, repeat_string, rich_string

#: A copyable string: starts and ends with a letter/digit (or ``+``, for C++), may contain . , : @ / + _ -
COPYABLE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.,:@/+_\-]*[A-Za-z0-9+]|[A-Za-z0-9]")
#: Korean transliteration → English spelling, as the Tatoeba and textbook sets write them.
NAME_PAIRS = {
    "톰": "Tom",
    "메리": "Mary",
    "존": "John",
    "앨리스": "Alice",
    "보스턴": "Boston",
    "도쿄": "Tokyo",
    "호주": "Australia",
    "런던": "London",
    "뉴욕": "New York",
}
#: A transliterated name counts only at a word start and followed by a particle or the word's end
#: (톰은, 존에게), so 존중 ("respect") or 아톰 is never touched.
PARTICLE_AFTER = r"(?=은|는|이|가|을|를|에게|에서|에|의|과|와|도|한테|랑|이랑|\s|$|[.,?!])"
FIRST_NAMES = (
    "Anna Peter Mary Tom John Alice Emma Liam Noah Olivia Mia Lucas Sofia Ethan Chloe Daniel "
    "Laura Kevin Sarah David James Linda Maria Paul Ken Yuki Minsu Jisoo Hana Min Leo Nina Omar "
    "Ivan Elena Carlos Fatima Grace Henry Isabel Jack Karen Lily Mark Nora Oscar Rosa Sam Tina "
    "Victor Wendy Zoe Brian Clara Diego Ella Felix Hugo Iris"
).split()
PLACES = (
    "Boston Seoul Busan London Paris Tokyo Berlin Sydney Toronto Chicago Madrid Rome Vienna Oslo "
    "Dublin Lisbon Prague Denver Austin Osaka Jeju Incheon Daegu Texas California Canada Mexico"
).split()
BRANDS = (
    "Google Apple Samsung Netflix Linux Python Java Ubuntu Windows GitHub YouTube Firefox Excel "
    "Android iPhone Zoom Slack Docker Kakao Naver Hyundai Nike Adidas Spotify Amazon Tesla"
).split()
WORDS = (
    "report data notes main config test app photo music index setup draft budget plan memo invoice "
    "backup readme script server client school project"
).split()
EXTS = "pdf txt json py csv png jpg docx html md zip".split()
TLDS = "com org net io kr".split()


def _latin_word(rng: random.Random) -> str:
    return rng.choice(rng.choice((FIRST_NAMES, PLACES, BRANDS)))


LAST_NAMES = "Potter Smith Kim Lee Park Brown Garcia Miller Jones Wilson Taylor Martin".split()


def any_string(rng: random.Random, numeric: bool) -> str:
    """A random copyable string of any shape (used for a share of the swaps, ``cross``): numbers
    as integers, thousands with commas, decimals, times, phone and order numbers; text as names,
    two-word names, places, brands, e-mail addresses, URLs, file names and codes."""
    if numeric:
        shape = rng.randrange(6)
        if shape == 0:
            return _digits(rng, rng.randint(1, 4), False)
        if shape == 1:
            return f"{rng.randint(1, 999)},{_digits(rng, 3, True)[1:]}{rng.randint(0, 9)}"
        if shape == 2:
            return f"{rng.randint(0, 99)}.{rng.randint(0, 99)}"
        if shape == 3:
            return f"{rng.randint(1, 12)}:{rng.randint(0, 5)}{rng.randint(0, 9)}"
        if shape == 4:
            return f"010-{_digits(rng, 4, False)}-{_digits(rng, 4, False)}"
        return f"{rng.choice('ABCDKX')}-{_digits(rng, 4, False)}"
    shape = rng.randrange(7)
    if shape == 0:
        return f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
    if shape == 1:
        return f"{rng.choice(PLACES)} {rng.choice(('Station', 'Park', 'Tower', 'Airport'))}"
    if shape == 2:
        return replacement("a@b.c", rng)
    if shape == 3:
        return replacement("https://x", rng) if rng.random() < 0.5 else f"www.{rng.choice(WORDS)}.{rng.choice(TLDS)}"
    if shape == 4:
        return (
            f"{rng.choice(WORDS)}.{rng.choice(EXTS)}"
            if rng.random() < 0.6
            else f"{rng.choice(WORDS)}_{_digits(rng, 4, True)}.{rng.choice(EXTS)}"
        )
    if shape == 5:
        return f"{rng.choice(WORDS)}{_digits(rng, rng.randint(1, 4), False)}"
    return rng.choice(("C++", "C#", "Node.js", "Wi-Fi", "K-pop", "3D", "USB-C")) if rng.random() < 0.3 else _latin_word(rng)


def replacement(s: str, rng: random.Random) -> str:
    """A random string of the same shape as ``s`` (see the module docstring).

    Each run of digits keeps its length (±1 for a lone number) and the punctuation between
    runs is kept, so ``15,000`` → ``72,310``, ``3:30`` → ``9:05``-shaped, ``010-1234-5678`` →
    ``0xx-xxxx-xxxx``; a Latin word becomes a name, place or brand; anything with ``@``, ``/``
    or a file extension becomes an e-mail address, URL or file name.
    """
    if "@" in s:
        return f"{rng.choice(FIRST_NAMES).lower()}{rng.randint(1, 99)}@{rng.choice(WORDS)}.{rng.choice(TLDS)}"
    if "://" in s or s.startswith("www."):
        return f"https://www.{rng.choice(WORDS)}{rng.choice(('', str(rng.randint(1, 9))))}.{rng.choice(TLDS)}"
    if re.fullmatch(r"[A-Za-z_]+\.[A-Za-z]{2,4}", s) and not s[0].isupper():
        return f"{rng.choice(WORDS)}.{rng.choice(EXTS)}"
    if re.fullmatch(r"[0-9][0-9.,:\-/]*", s):
        runs = re.split(r"([.,:\-/])", s)
        if len(runs) == 1:  # a lone number: keep or change its length by one
            n = max(1, len(s) + rng.choice((-1, 0, 0, 1)))
            return _digits(rng, n, lead_zero=False)
        return "".join(r if not r.isdigit() else _digits(rng, len(r), lead_zero=r.startswith("0")) for r in runs)
    if re.fullmatch(r"[A-Za-z]+", s):
        w = _latin_word(rng)
        return w.upper() if s.isupper() and len(s) > 1 else w
    if re.fullmatch(r"[A-Za-z]+[0-9]+", s):  # abc123, iPhone15-like
        return f"{rng.choice(WORDS)}{_digits(rng, rng.randint(1, 4), False)}"
    return s  # a shape we do not vary (e.g. C++, Misc/ACKS): kept as it is


def shared_strings(ko: str, en: str) -> list[str]:
    """Copyable strings that occur verbatim on both sides of a pair, longest first, ties in
    alphabetical order (never set order, which changes with the interpreter's hash seed and would
    make the output differ between runs of the same seed)."""
    return sorted(set(COPYABLE.findall(ko)) & set(COPYABLE.findall(en)), key=lambda s: (-len(s), s))


def _swap(text: str, old: str, new: str) -> str:
    # Whole-token replacement: no letter or digit may touch the string on either side, so a
    # following Hangul particle or unit is kept (2003년 → 1987년, Tom은 → Anna는).
    left = r"(?<![A-Za-z0-9])"
    right = r"(?![A-Za-z0-9])"
    return re.sub(left + re.escape(old) + right, lambda _m: new, text)


def augment_pair(
    ko: str, en: str, rng: random.Random, variants: int, cross: float = 0.0, rich: bool = False, repeats: float = 0.0
) -> list[tuple[str, str]]:
    """Up to ``variants`` new ``(ko, en)`` pairs made from one pair (none if nothing to swap).
    With probability ``cross`` a swap takes a string of any shape (:func:`any_string`) instead of
    the same shape, so the model also sees e-mail addresses, URLs and prices in everyday frames;
    with ``rich`` those strings come from :func:`core.training.copy_shapes.rich_string` (round
    numbers, pseudo-words) instead of :func:`any_string`; with ``repeats`` > 0 that share of
    those draws comes from :func:`core.training.copy_shapes.repeat_string` (runs of one piece:
    ``3.11``, ``www.``). ``repeats=0`` draws exactly as before.

    Raises:
        ValueError: if ``variants`` < 1.
    """
    if variants < 1:
        raise ValueError(f"variants must be at least 1, got {variants}")
    shared = [s for s in shared_strings(ko, en) if replacement(s, random.Random(0)) != s]
    names = [(k, e) for k, e in NAME_PAIRS.items() if re.search(_name_re(k), ko) and re.search(rf"\b{re.escape(e)}\b", en)]
    if not shared and not names:
        return []
    base = rich_string if rich else any_string

    def draw(r: random.Random, numeric: bool) -> str:
        if repeats > 0 and r.random() < repeats:  # no extra draw at 0: old commands write the same files
            return repeat_string(r, numeric)
        return base(r, numeric)

    out = set()
    for _ in range(variants * 3):
        k2, e2 = ko, en
        for s in shared:
            new = draw(rng, s[0].isdigit()) if rng.random() < cross else replacement(s, rng)
            k2, e2 = _swap(k2, s, new), _swap(e2, s, new)
            if new[-1].isalpha():
                k2 = fix_particle(k2, new)
        for k, e in names:
            new = (
                draw(rng, False)
                if rng.random() < cross
                else rng.choice(FIRST_NAMES if k in ("톰", "메리", "존", "앨리스") else PLACES)
            )
            k2 = re.sub(_name_re(k), lambda _m, new=new: new, k2)  # type: ignore[misc]  # (new bound per loop)
            if new[-1].isalpha():
                k2 = fix_particle(k2, new)
            e2 = re.sub(rf"\b{re.escape(e)}\b", new, e2)
        if (k2, e2) != (ko, en):
            out.add((k2, e2))
        if len(out) >= variants:
            break
    return sorted(out)


#: Korean particle pairs (after a consonant, after a vowel): 톰은 / 메리는.
PARTICLES = (("은", "는"), ("이", "가"), ("을", "를"), ("과", "와"), ("이랑", "랑"))


def _ends_in_vowel(latin: str) -> bool:
    """Whether a Latin-script name is read with a final vowel in Korean (Anna → 애나, Peter → 피터;
    Tom → 톰 and Paul → 폴 end in a consonant). A spelling heuristic: a final vowel letter or -r."""
    return latin[-1].lower() in "aeiouyr"


def fix_particle(text: str, name: str) -> str:
    """Make the particle right after each ``name`` agree with its final sound: Anna은 → Anna는."""
    vowel = _ends_in_vowel(name)

    def pick(m: re.Match) -> str:
        p = m.group(1)
        for cons, vow in PARTICLES:
            if p in (cons, vow):
                return name + (vow if vowel else cons)
        return m.group(0)

    alts = "|".join(sorted({p for pair in PARTICLES for p in pair}, key=len, reverse=True))
    return re.sub(rf"(?<![A-Za-z]){re.escape(name)}({alts})(?![가-힣])", pick, text)


def _name_re(name: str) -> str:
    """Regex for a transliterated name at a word start, followed by a particle or the end."""
    return rf"(?<![가-힣A-Za-z]){re.escape(name)}{PARTICLE_AFTER}"


def augment_files(
    sources: list[Path],
    out: Path,
    variants: int = 3,
    seed: int = 1,
    exclude: set[str] | None = None,
    cross: float = 0.0,
    rich: bool = False,
    repeats: float = 0.0,
) -> int:
    """Write ``out.ko``/``out.en`` with the augmented pairs of every ``source`` (``.ko``/``.en``
    pairs, given without the extension). Lines whose Korean side is in ``exclude`` (e.g. a test
    fixture) are never written. Returns the number of pairs written.

    Raises:
        FileNotFoundError: if a source file is missing.
    """
    rng = random.Random(seed)
    exclude = exclude or set()
    pairs: list[tuple[str, str]] = []
    for src in sources:
        ko_lines, en_lines = read_aligned(f"{src}.ko", f"{src}.en")
        for ko, en in zip(ko_lines, en_lines):
            pairs += [p for p in augment_pair(ko, en, rng, variants, cross, rich, repeats) if p[0] not in exclude]
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{out}.ko").write_text("".join(k + "\n" for k, _ in pairs), encoding="utf-8")
    Path(f"{out}.en").write_text("".join(e + "\n" for _, e in pairs), encoding="utf-8")
    return len(pairs)


def main(argv: list[str] | None = None) -> None:
    """``python -m core.training.copy_augment --out runs/data/copy-aug SRC [SRC …]``."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("sources", nargs="+", help="corpus paths without .ko/.en")
    p.add_argument("--out", required=True, help="output path without .ko/.en")
    p.add_argument("--variants", type=int, default=3, help="new pairs per usable pair (default 3)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--cross",
        type=float,
        default=0.0,
        help="share of swaps that take a string of any shape (e-mail, URL, price …), default 0",
    )
    p.add_argument(
        "--rich",
        action="store_true",
        help="cross swaps draw round numbers, long digit strings and pseudo-word e-mail "
        "addresses, URLs and file names (core/training/copy_shapes.py)",
    )
    p.add_argument(
        "--repeats",
        type=float,
        default=0.0,
        help="share of cross swaps that draw a string with a run of one piece (3.11, www., "
        "010-1111-…; core/training/copy_shapes.repeat_string), default 0",
    )
    p.add_argument(
        "--exclude", action="append", default=[], help="TSV file whose first column (Korean) must never be written (repeatable)"
    )
    a = p.parse_args(argv)
    exclude = {line.split("\t")[0] for f in a.exclude for line in read_lines(f) if line.strip()}
    n = augment_files([Path(s) for s in a.sources], Path(a.out), a.variants, a.seed, exclude, a.cross, a.rich, a.repeats)
    print(f"wrote {n} pairs to {a.out}.ko/.en")


if __name__ == "__main__":
    main()
