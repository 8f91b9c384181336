"""Copy augmentation (core/training/copy_augment.py): swapped strings keep their shape and
appear on both sides, names keep their particles, excluded sentences never come out."""

import random
import re

import pytest

from core.training.copy_augment import (
    any_string,
    augment_files,
    augment_pair,
    fix_particle,
    replacement,
    shared_strings,
)


@pytest.mark.parametrize(
    "s, shape",
    [
        ("2003", r"\d{3,5}"),
        ("15,000", r"\d{2},\d{3}"),
        ("3:30", r"\d:\d{2}"),
        ("010-1234-5678", r"0\d{2}-\d{4}-\d{4}"),
        ("36.5", r"\d{2}\.\d"),
        ("minsu@example.com", r"[a-z]+\d+@[a-z]+\.[a-z]+"),
        ("https://github.com", r"https://www\.[a-z]+\d?\.[a-z]+"),
        ("report.pdf", r"[a-z]+\.[a-z]+"),
        ("abc123", r"[a-z]+\d+"),
    ],
)
def test_replacement_keeps_the_shape(s, shape):
    rng = random.Random(3)
    outs = {replacement(s, rng) for _ in range(20)}
    assert all(re.fullmatch(shape, o) for o in outs), outs
    assert len(outs) > 1  # it does vary


def test_latin_word_becomes_a_name_and_acronyms_stay_upper_case():
    rng = random.Random(0)
    assert replacement("Python", rng).isalpha()
    assert replacement("TV", rng).isupper()
    assert replacement("C++", rng) == "C++"  # a shape we do not vary


def test_shared_strings_are_verbatim_on_both_sides():
    assert shared_strings("나는 2003년에 TV를 샀다.", "I bought a TV in 2003.") == ["2003", "TV"]
    assert shared_strings("세 시에 만나요.", "See you at three.") == []


def test_augment_pair_swaps_the_same_string_on_both_sides():
    rng = random.Random(1)
    out = augment_pair("나는 2003년에 열세 살이었다.", "I was 13 in 2003.", rng, variants=3)
    assert len(out) == 3
    for ko, en in out:
        year = re.search(r"(\d+)년", ko).group(1)
        assert year != "2003"
        assert en == f"I was 13 in {year}."  # only the shared string changed


def test_name_swap_uses_one_latin_name_and_fixes_the_particle():
    rng = random.Random(2)
    out = augment_pair("톰은 메리를 좋아해.", "Tom likes Mary.", rng, variants=4)
    assert out
    for ko, en in out:
        m = re.fullmatch(r"([A-Z][a-z]+) likes ([A-Z][a-z]+)\.", en)
        assert m, en
        a, b = m.groups()
        assert ko.startswith(a) and b in ko
        topic = ko[len(a)]
        assert topic == ("는" if a[-1] in "aeiouyr" else "은"), ko


def test_names_inside_korean_words_are_left_alone():
    assert augment_pair("그는 존중받을 만하다.", "John deserves respect.", random.Random(0), 2) == []


def test_fix_particle():
    assert fix_particle("Anna은 Anna을 Anna과", "Anna") == "Anna는 Anna를 Anna와"
    assert fix_particle("Tom는 Tom가", "Tom") == "Tom은 Tom이"


def test_augment_files_excludes_and_writes_aligned_lines(tmp_path):
    (tmp_path / "a.ko").write_text("나는 2003년에 태어났다.\n톰은 학생이다.\n고양이가 잔다.\n", encoding="utf-8")
    (tmp_path / "a.en").write_text("I was born in 2003.\nTom is a student.\nThe cat sleeps.\n", encoding="utf-8")
    out = tmp_path / "out"
    n = augment_files([tmp_path / "a"], out, variants=2, seed=5, exclude={"고양이가 잔다."})
    ko = (tmp_path / "out.ko").read_text(encoding="utf-8").splitlines()
    en = (tmp_path / "out.en").read_text(encoding="utf-8").splitlines()
    assert n == len(ko) == len(en) == 4
    assert not any("고양이" in k for k in ko)
    for k, e in zip(ko, en):
        shared = shared_strings(k, e)
        assert shared and "2003" not in k and "톰" not in k
    with pytest.raises(ValueError):
        augment_pair("a", "a", random.Random(0), 0)


def test_any_string_covers_the_copy_shapes():
    rng = random.Random(4)
    nums = [any_string(rng, True) for _ in range(200)]
    text = [any_string(rng, False) for _ in range(300)]
    assert all(re.fullmatch(r"[A-Z]-\d{4}|[\d.,:\-]+", n) for n in nums)
    assert any(re.fullmatch(r"\d{1,3},\d{3}", n) for n in nums) and any(":" in n for n in nums)
    assert any("@" in t for t in text) and any(t.startswith(("https://", "www.")) for t in text)
    assert any(re.fullmatch(r"[a-z_0-9]+\.[a-z]+", t) for t in text) and any(" " in t for t in text)


def test_cross_swaps_put_other_shapes_in_the_same_frame():
    rng = random.Random(6)
    out = augment_pair("톰은 메리를 좋아해.", "Tom likes Mary.", rng, variants=20, cross=1.0)
    assert len(out) >= 10
    for ko, en in out:
        a, b = re.fullmatch(r"(.+) likes (.+)\.", en).groups()
        assert ko.startswith(a) and b in ko  # the same strings on both sides, verbatim
        assert "톰" not in ko and "메리" not in ko


def test_rich_strings_cover_round_numbers_and_unseen_words():
    from core.training.copy_shapes import pseudo_word, rich_string, round_number

    rng = random.Random(11)
    rounds = [round_number(rng) for _ in range(300)]
    assert any(re.fullmatch(r"\d{1,2},000", n) for n in rounds)  # 15,000
    assert any(re.fullmatch(r"\d,[25]00", n) for n in rounds)  # 4,500 / 1,200
    assert any(re.fullmatch(r"(19|20)\d\d", n) for n in rounds)  # a year
    nums = [rich_string(rng, True) for _ in range(300)]
    assert all(re.fullmatch(r"[A-Z]-\d{3,5}|[\d.,:\-]+", n) for n in nums)
    assert any(re.fullmatch(r"\d{7,9}", n) for n in nums)  # long digit strings
    text = [rich_string(rng, False) for _ in range(400)]
    assert sum("@" in t for t in text) > 30 and sum("://" in t for t in text) > 20
    assert any(re.fullmatch(r"[a-z]+_\d{4}\.[a-z0-9]+", t) for t in text)  # receipt_0412.png-like
    words = {pseudo_word(rng) for _ in range(200)}
    assert len(words) > 150 and all(re.fullmatch(r"[a-z]+", w) for w in words)


def test_rich_cross_swaps_keep_both_sides_verbatim(tmp_path):
    src = tmp_path / "c"
    (tmp_path / "c.ko").write_text("이 책은 2003년에 나왔다.\n톰은 메리를 좋아해.\n", encoding="utf-8")
    (tmp_path / "c.en").write_text("This book came out in 2003.\nTom likes Mary.\n", encoding="utf-8")
    n = augment_files([src], tmp_path / "out", variants=8, seed=2, cross=1.0, rich=True)
    ko = (tmp_path / "out.ko").read_text(encoding="utf-8").splitlines()
    en = (tmp_path / "out.en").read_text(encoding="utf-8").splitlines()
    assert n == len(ko) == len(en) >= 12
    for k, e in zip(ko, en):
        m = re.fullmatch(r"This book came out in (.+)\.", e)
        if m:
            assert f"{m.group(1)}년에" in k and "2003" not in k
        else:
            a, b = re.fullmatch(r"(.+) likes (.+)\.", e).groups()
            assert k.startswith(a) and b in k


def test_same_seed_same_output_whatever_the_hash_seed(tmp_path):
    """Ties in string length (12 / 34 / AB / CD) must not be ordered by set iteration, which
    changes with PYTHONHASHSEED: two processes with the same --seed write the same files."""
    import os
    import subprocess
    import sys

    (tmp_path / "c.ko").write_text("12과 34와 AB와 CD를 봤다.\n" * 3 + "톰은 56시에 EF를 샀다.\n", encoding="utf-8")
    (tmp_path / "c.en").write_text("I saw 12, 34, AB and CD.\n" * 3 + "Tom bought EF at 56.\n", encoding="utf-8")
    outs = []
    for hash_seed in ("1", "2", "3"):
        out = tmp_path / f"o{hash_seed}"
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "core.training.copy_augment",
                "--out",
                str(out),
                "--variants",
                "4",
                "--cross",
                "0.5",
                "--rich",
                "--seed",
                "7",
                str(tmp_path / "c"),
            ],
            check=True,
            env=env,
            capture_output=True,
        )
        outs.append((out.with_suffix(".ko").read_text(encoding="utf-8"), out.with_suffix(".en").read_text(encoding="utf-8")))
    assert outs[0][0].count("\n") >= 4
    assert outs[0] == outs[1] == outs[2]


RUN = re.compile(r"(.+)\1")  # one piece twice in a row: 11, ww, 6.6.


def test_repeat_strings_all_hold_a_run_of_one_piece():
    from core.training.copy_shapes import repeat_string

    rng = random.Random(5)
    nums = [repeat_string(rng, True) for _ in range(300)]
    assert all(RUN.search(n) and re.fullmatch(r"[\d.\-]+", n) for n in nums)
    assert any(re.fullmatch(r"\d+\.(\d)\1", n) for n in nums)  # 3.11-like
    assert any(re.fullmatch(r"0\d\d-\d{4}-\d{4}", n) for n in nums)  # a phone number
    text = [repeat_string(rng, False) for _ in range(300)]
    assert all(RUN.search(t) for t in text)
    assert any(t.startswith("www.") for t in text) and any(t.endswith("++") for t in text)


def test_repeats_share_draws_runs_and_zero_changes_nothing(tmp_path):
    (tmp_path / "c.ko").write_text("이 책은 2003년에 나왔다.\n" * 10, encoding="utf-8")
    (tmp_path / "c.en").write_text("This book came out in 2003.\n" * 10, encoding="utf-8")
    base = dict(variants=6, seed=3, cross=1.0, rich=True)
    augment_files([tmp_path / "c"], tmp_path / "a", **base)
    augment_files([tmp_path / "c"], tmp_path / "b", **base, repeats=0.0)
    assert (tmp_path / "a.en").read_text() == (tmp_path / "b.en").read_text()  # old commands, same files
    augment_files([tmp_path / "c"], tmp_path / "r", **base, repeats=1.0)
    ko = (tmp_path / "r.ko").read_text(encoding="utf-8").splitlines()
    en = (tmp_path / "r.en").read_text(encoding="utf-8").splitlines()
    got = [re.fullmatch(r"This book came out in (.+)\.", e).group(1) for e in en]
    assert len(got) >= 6 and all(RUN.search(s) for s in got)
    assert all(f"{s}년에" in k for s, k in zip(got, ko))
