"""Richer random copyable strings for copy augmentation (``--rich``).

The first copy-augmented stages taught the model to copy names and short numbers, but it still
garbled strings with *repeated* pieces and long piece sequences: ``15,000`` → ``150,0000``,
``1990`` → ``190``, ``minsu@example.com`` → ``minimum.comple.com.com``. Two causes are addressed:

* **round numbers** — prices and years are mostly round (``4,500``, ``1,200``, ``2000``), so
  runs of the same digit (``000``) must be copied by count, not by "a few zeros";
* **unseen words** — e-mail addresses, URLs, file names and codes built from a fixed word list
  can be memorised; pseudo-words made of random letters (``korvel``, ``tamsi``) can only be copied.

:func:`rich_string` draws one string of any of these shapes; :mod:`core.training.copy_augment`
uses it in place of :func:`~core.training.copy_augment.any_string` when ``rich=True``.
"""

from __future__ import annotations

import random

ONSETS = "b c d f g h j k l m n p r s t v w z br ch cl dr fl gr kr pl pr sh st th tr".split()
VOWELS = "a e i o u a e i o ai ea ou".split()
CODAS = ["", "", "", "n", "r", "l", "s", "m", "t", "x", "ng", "ck"]
COMMON_WORDS = (
    "example home mail shop news blog docs data files cloud photos notes report main config "
    "test index setup draft budget plan memo invoice backup readme script server client school "
    "project music video travel study work team office city garden game store lab"
).split()
EXTS = "pdf txt json py csv png jpg docx html md zip xlsx pptx mp3 mp4 yaml log".split()
TLDS = "com org net io kr co.kr edu dev".split()


def pseudo_word(rng: random.Random, syllables: int | None = None) -> str:
    """A pronounceable random lower-case word of 1–3 syllables (``korvel``, ``tamsi``)."""
    n = syllables or rng.choice((1, 2, 2, 2, 3))
    return "".join(rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS) for _ in range(n))


def _word(rng: random.Random) -> str:
    """A real common word or, half the time, a pseudo-word."""
    return rng.choice(COMMON_WORDS) if rng.random() < 0.5 else pseudo_word(rng)


def _digits(rng: random.Random, n: int, lead_zero: bool = False) -> str:
    """``n`` random digits; the first is 0 with ``lead_zero`` (010-…), else 1–9."""
    first = "0" if lead_zero else str(rng.randint(1, 9))
    return first + "".join(str(rng.randint(0, 9)) for _ in range(n - 1))


def round_number(rng: random.Random) -> str:
    """A round number as prices, counts and years are written: ``4,500``, ``1,200``, ``15,000``,
    ``300``, ``2000``, ``1990``, ``120,000``, ``1,000,000``."""
    shape = rng.randrange(6)
    if shape == 0:  # thousands with a comma and a round tail
        return f"{rng.randint(1, 99)},{rng.choice(('000', '000', '500', '200', '800', '900', '250'))}"
    if shape == 1:  # hundreds of thousands / millions
        return f"{rng.randint(1, 999)},000" + (",000" if rng.random() < 0.3 else "")
    if shape == 2:  # a year
        return f"{rng.choice((19, 20))}{rng.randint(0, 99):02d}"
    if shape == 3:  # 100, 2000, 50000 without commas
        return str(rng.randint(1, 9)) + "0" * rng.randint(1, 4)
    if shape == 4:  # 1,990-like: digits with repeats
        d = str(rng.randint(1, 9))
        return d + rng.choice(("00", "11", "99", "55")) + str(rng.randint(0, 9))
    return f"{rng.randint(1, 9)}.{rng.randint(0, 9)}{rng.choice(('', '0', '5', str(rng.randint(0, 9))))}"


def numeric_string(rng: random.Random) -> str:
    """Any numeric copy shape: round numbers, long digit strings, decimals and versions, times,
    phone numbers, order codes."""
    shape = rng.randrange(7)
    if shape <= 1:
        return round_number(rng)
    if shape == 2:
        return _digits(rng, rng.randint(2, 9))
    if shape == 3:
        return f"{rng.randint(0, 12)}.{rng.randint(0, 20)}" + (f".{rng.randint(0, 9)}" if rng.random() < 0.3 else "")
    if shape == 4:
        return f"{rng.randint(1, 12)}:{rng.choice(('00', '30', '15', '45', f'{rng.randint(0, 59):02d}'))}"
    if shape == 5:
        return f"0{rng.randint(10, 99)}-{_digits(rng, rng.choice((3, 4)))}-{_digits(rng, 4)}"
    return f"{rng.choice('ABCDEFGHKMNPRSTXZ')}-{_digits(rng, rng.randint(3, 5))}"


def text_string(rng: random.Random) -> str:
    """Any text copy shape: e-mail addresses, URLs (with and without a path), ``www.`` hosts,
    file names (with ``_`` and digits), letter–digit codes and passwords, names."""
    shape = rng.randrange(6)
    if shape == 0:
        local = rng.choice(
            (
                pseudo_word(rng),
                f"{pseudo_word(rng)}{rng.randint(1, 999)}",
                f"{pseudo_word(rng, 1)}.{pseudo_word(rng)}",
                _word(rng),
            )
        )
        return f"{local}@{_word(rng)}.{rng.choice(TLDS)}"
    if shape == 1:
        host = f"{rng.choice(('', 'www.', 'docs.', 'blog.'))}{_word(rng)}.{rng.choice(TLDS)}"
        path = rng.choice(("", "", f"/{_word(rng)}", f"/{_word(rng)}/{_digits(rng, rng.randint(1, 4))}"))
        return f"{rng.choice(('https://', 'https://', 'http://', ''))}{host}{path}"
    if shape == 2:
        stem = rng.choice(
            (
                _word(rng),
                f"{_word(rng)}_{_word(rng)}",
                f"{_word(rng)}_{rng.randint(0, 9999):04d}",
                f"{_word(rng)}{rng.randint(1, 99)}",
            )
        )
        return f"{stem}.{rng.choice(EXTS)}"
    if shape == 3:
        return rng.choice(
            (
                f"{pseudo_word(rng, 1)}{_digits(rng, rng.randint(2, 4))}",
                f"{pseudo_word(rng, 1).upper()}{_digits(rng, rng.randint(2, 4))}",
                f"{pseudo_word(rng)}_{rng.randint(1, 99)}",
            )
        )
    if shape == 4:  # a capitalised pseudo-name, one or two words
        name = pseudo_word(rng).capitalize()
        return name if rng.random() < 0.6 else f"{name} {pseudo_word(rng).capitalize()}"
    return _word(rng).capitalize()


def _run(rng: random.Random, lo: int = 2, hi: int = 4) -> str:
    """A run of one digit repeated ``lo``–``hi`` times (``111``, ``00``)."""
    return str(rng.randint(0, 9)) * rng.randint(lo, hi)


def _doubled(word: str, rng: random.Random) -> str:
    """``word`` with one letter after the first doubled (``tasi`` → ``tassi``)."""
    i = rng.randrange(1, len(word)) if len(word) > 1 else 0
    return word[: i + 1] + word[i] + word[i + 1 :]


def repeat_string(rng: random.Random, numeric: bool) -> str:
    """A copyable string with a *run* of one repeated piece, the shape the model still miscounts
    (``www.example.org`` → ``ww.example.org``, ``3.11`` → ``3.1``, ``1234`` → ``123``):
    numbers with a run of one digit (``41115``, ``3.11``, ``1.1.0``, ``010-1111-2345``); text as
    ``www.`` hosts, pseudo-words and file names with a doubled letter or digits (``tassi``,
    ``img_0011.png``) and codes such as ``C++`` or ``AA-1100``."""
    if numeric:
        shape = rng.randrange(4)
        if shape == 0:  # digits around a run: 1100, 41115, 2333
            return str(rng.randint(1, 9)) + _run(rng) + _digits(rng, rng.randint(1, 3), lead_zero=True)[1:]
        if shape == 1:  # a version or decimal with a repeated part: 3.11, 2.22, 1.1.1, 10.0.0
            d = rng.randint(0, 9)
            return rng.choice(
                (
                    f"{rng.randint(1, 12)}.{d}{d}",
                    f"{d}.{d}.{rng.randint(0, 9)}",
                    f"{d}.{d}{d}",
                    f"{rng.randint(1, 12)}.0.0",
                    f"{rng.randint(1, 9)}.{d}{d}.{rng.randint(0, 9)}",
                )
            )
        if shape == 2:  # a phone number with runs
            return f"0{rng.randint(10, 99)}-{_run(rng, 2, 4).ljust(4, str(rng.randint(0, 9)))}-{_digits(rng, 4)}"
        return _digits(rng, rng.randint(1, 3)) + _run(rng, 2, 3) + _digits(rng, rng.randint(1, 3), lead_zero=True)
    shape = rng.randrange(5)
    if shape == 0:
        return f"www.{_word(rng)}.{rng.choice(TLDS)}"
    if shape == 1:
        w = _doubled(pseudo_word(rng), rng)
        return w.capitalize() if rng.random() < 0.5 else w
    if shape == 2:
        return f"{_word(rng)}_{_run(rng, 2, 2)}{_digits(rng, 2, lead_zero=True)[1:]}{rng.randint(0, 9)}.{rng.choice(EXTS)}"
    if shape == 3:
        letter = rng.choice("ABCDEFGHKMNPRSTXZ")
        return rng.choice((f"{letter}++", f"{letter}{letter}-{_run(rng, 2, 2)}{_digits(rng, 2)}", f"{letter}{letter}{letter}"))
    return f"{_doubled(pseudo_word(rng, 1), rng)}@{_word(rng)}.{rng.choice(TLDS)}"


def rich_string(rng: random.Random, numeric: bool) -> str:
    """A random copyable string: :func:`numeric_string` for a number's place, else
    :func:`text_string`. The result is what must appear verbatim on both sides of the pair."""
    return numeric_string(rng) if numeric else text_string(rng)
