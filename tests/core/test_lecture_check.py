"""The lecture checks: fixture validity, normalization, copy and register scoring, and the
`python -m core check` command on a tiny checkpoint."""

from __future__ import annotations

import json
import re

from core.__main__ import main
from core.evaluation.evaluate import register_counts
from core.evaluation.lecture_check import (
    COPY_FIXTURE,
    LECTURE_FIXTURE,
    acceptable,
    copied,
    load_fixture,
    normalize,
)


def test_fixtures_are_big_enough_and_well_formed():
    lecture, copy = load_fixture(LECTURE_FIXTURE), load_fixture(COPY_FIXTURE)
    assert len(lecture) >= 50 and len(copy) >= 30
    assert len({i.source for i in lecture}) == len(lecture)
    for item in copy:  # every must-copy string is written in the Korean source itself
        for s in item.targets:
            assert s in item.source, (s, item.source)
    kinds = {
        "digits": r"\d",
        "latin": r"[A-Za-z]{3}",
        "url": r"(https?://|www\.)",
        "file": r"\w\.(pdf|json|py|png)\b",
        "email": r"@",
        "price": r"\d,\d{3}",
    }
    for kind, pat in kinds.items():
        assert any(re.search(pat, s) for i in copy for s in i.targets), kind


def test_normalize_and_acceptable():
    assert normalize("I'm a student.") == normalize("i am a student") == "i am a student"
    assert normalize("I can't answer that question!") == normalize("I cannot answer that question")
    assert acceptable("I'm a student.", ["I am a student."])
    assert not acceptable("I'm a teacher.", ["I am a student.", "I'm a student."])
    assert acceptable("Close the door, please", ["Please close the door.", "Close the door, please."])


def test_copied_is_verbatim_and_case_sensitive():
    assert copied("I studied Python in 2024 for 3 months.", ["2024", "Python", "3"]) == [True, True, True]
    assert copied("I studied python.", ["Python", "2024"]) == [False, False]


def test_register_counts_whole_words_case_insensitive():
    got = register_counts(["Shares rose on the Nasdaq.", "The index of the book."], ["I have shares.", "hi"])
    assert got["shares"] == [1, 1] and got["nasdaq"] == [1, 0] and got["index"] == [1, 0] and got["percent"] == [0, 0]


def test_check_command_on_tiny_checkpoint(tiny_checkpoint, tmp_path, capsys):
    out = tmp_path / "check.json"
    assert main(["check", "--checkpoint", str(tiny_checkpoint), "--json", str(out)]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    r = json.loads(out.read_text(encoding="utf-8"))
    n_lecture = len(load_fixture(LECTURE_FIXTURE))
    n_copy = sum(len(i.targets) for i in load_fixture(COPY_FIXTURE))
    assert r["lecture"]["total"] == n_lecture == len(r["lecture"]["rows"])
    assert r["copy"]["total"] == n_copy
    assert r["lecture"]["acceptable"] == sum(row["acceptable"] for row in r["lecture"]["rows"])
    assert r["copy"]["copied"] == n_copy - sum(len(row["missing"]) for row in r["copy"]["rows"])
    assert f"/{n_lecture}" in line and f"/{n_copy}" in line
