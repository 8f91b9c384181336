"""Template filling for the number/name training data: the same value on both sides, Korean clock
times mapped to the English form, deterministic for a seed, mismatched templates refused."""

from __future__ import annotations

import re

import pytest

from core.training.fill_templates import fill_all

T = [
    (
        "{PERSON} 씨는 {TIME_KO}에 {PRICE}달러를 내고 {NAME} {N}개를 샀어요.",
        "{PERSON} paid ${PRICE} at {TIME_EN} and bought {N} {NAME} units.",
    ),
    (
        "{YEAR}년에 {TITLE}라는 책이 {D}% 더 팔렸고 파일은 {SIZE}였어요.",
        "In {YEAR}, a book called {TITLE} sold {D}% more, and the file was {SIZE}.",
    ),
]


def test_values_are_copied_to_both_sides_and_times_match():
    pairs = fill_all(T, variants=50, seed=3)
    assert len(pairs) == 100
    for ko, en in pairs[:50]:
        period, h, m = re.search(r"(오전|오후|저녁|밤|새벽) (\d+)시 (\d+)분", ko).groups()
        ampm = re.search(rf"\b{h}:{int(m):02d} (a\.m\.|p\.m\.)", en).group(1)
        assert ampm == ("a.m." if period in ("오전", "새벽") else "p.m.")
        assert int(m) % 5  # never :15/:30/:45, which English may say in words
        price = re.search(r"([\d,]+)달러", ko).group(1)
        assert f"${price}" in en
        name, count = re.search(r"달러를 내고 (.+) ([\d,]+)개를", ko).groups()
        assert f"bought {count} {name} units" in en
    for ko, en in pairs[50:]:
        for value in re.findall(r"[\d.,]+%|\d+(?:GB|MB|TB|kg|g|ml|mm|cm|km|W|mAh|Hz)", ko):
            assert value in en


def test_deterministic_for_a_seed_and_different_across_seeds():
    assert fill_all(T, 5, seed=1) == fill_all(T, 5, seed=1)
    assert fill_all(T, 5, seed=1) != fill_all(T, 5, seed=2)


def test_a_template_whose_sides_hold_different_slots_is_refused():
    with pytest.raises(ValueError, match="slots differ"):
        fill_all([("{N}명", "{D} people")], 1, 0)
    with pytest.raises(ValueError, match="slots differ or are missing"):
        fill_all([("안녕", "hello")], 1, 0)


def test_templates_near_a_fixture_line_are_dropped_whole(tmp_path):
    from core.training.fill_templates import drop_near

    fixture = tmp_path / "f.tsv"
    fixture.write_text("# held out\n이 회사는 1976년에 설립되었습니다.\t1976\n", encoding="utf-8")
    templates = [
        ("이 회사는 {YEAR}년에 설립되었습니다.", "This company was founded in {YEAR}."),
        ("{PERSON} 씨는 고양이를 {N}마리 키워요.", "{PERSON} has {N} cats."),
    ]
    pairs = fill_all(templates, 4, seed=0)
    kept, dropped = drop_near(templates, pairs, 4, [str(fixture)])
    assert dropped == [templates[0][0]]
    assert kept == pairs[4:]
