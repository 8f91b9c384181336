"""Where the pairs to adapt a model on come from (no Qt): the main input's Korean text and its
Reference box (one pair), a TSV file (Korean<TAB>English, one pair a line), or the steps of a
lecture file that carry a ``reference``. Each returns the pairs and a few words saying where they
came from, for the adapted model's card."""

from __future__ import annotations

import re
from pathlib import Path

from core.errors import InputError
from core.training.adapt import MAX_PAIRS
from core.training.pairs_file import read_pairs
from gui.state.lecture import LectureError, load_lecture

BOXES, TSV, LECTURE = "boxes", "tsv", "lecture"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def pairs_from_boxes(text: str, reference: str | None) -> tuple[list[tuple[str, str]], str]:
    """The one pair (Korean input, Reference box).

    Raises:
        InputError: either box is empty."""
    ko, en = (text or "").strip(), (reference or "").strip()
    if not ko:
        raise InputError("type the Korean sentence to adapt on in the input box first")
    if not en:
        raise InputError("type its English translation in the Reference box first (the pair to adapt on)")
    return [(ko, en)], "the input and Reference boxes"


def pairs_from_tsv(path: str | Path) -> tuple[list[tuple[str, str]], str]:
    """The pairs of the TSV ``path`` (:func:`core.training.pairs_file.read_pairs`).

    Raises:
        InputError: no path, or a bad file (the message names the file and the line)."""
    if not str(path).strip():
        raise InputError("choose a TSV file of pairs (Korean<TAB>English, one a line) first")
    return read_pairs(path, max_pairs=MAX_PAIRS), Path(path).name


def pairs_from_lecture(path: str | Path) -> tuple[list[tuple[str, str]], str]:
    """(sentence, reference) of every step of the lecture file ``path`` that has a reference and a
    sentence (repeated pairs once, in order).

    Raises:
        InputError: no path, the lecture cannot be read, or none of its steps has a reference."""
    if not str(path).strip():
        raise InputError("choose a lecture file (.toml) first")
    try:
        lecture = load_lecture(path)
    except LectureError as exc:
        raise InputError(str(exc)) from None
    pairs = []
    for step in lecture.steps:
        pair = ((step.sentence or "").strip(), (step.reference or "").strip())
        if all(pair) and pair not in pairs:
            pairs.append(pair)
    if not pairs:
        raise InputError(f"{Path(path).name}: no step has both a sentence and a reference to adapt on")
    return pairs, f"the references of lecture {Path(path).name}"


def check_name(name: str) -> str:
    """``name`` stripped, if it can name a model folder: 1-64 letters, digits, ``.``, ``_``, ``-``,
    not starting with a dot, dash or underscore.

    Raises:
        InputError: otherwise."""
    name = (name or "").strip()
    if not NAME_RE.match(name):
        raise InputError(f"model name {name!r}: use 1-64 letters, digits, '.', '_' or '-' (starting with a letter or digit)")
    return name


__all__ = ["BOXES", "LECTURE", "TSV", "check_name", "pairs_from_boxes", "pairs_from_lecture", "pairs_from_tsv"]
