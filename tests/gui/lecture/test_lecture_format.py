"""Lecture files (gui/state/lecture.py, lecture_toml.py, lecture_pages.py): fields, defaults,
problems named by step and field (the lecture still opens), a saved step read back by ``tomllib``."""

from __future__ import annotations

import pytest

from gui.state.lecture import LectureError, LectureStep, load_lecture, parse_lecture
from gui.state.lecture_check import check_lecture
from gui.state.lecture_toml import append_step, step_toml
from tests.support import tiny_config

tomllib = pytest.importorskip("tomllib")  # Python 3.11+, as the lecture files


A, B = "집에 누군가 있어?", "제발 앉아."


TINY_LECTURE = f'''
title = "Tiny lecture"

[[steps]]
title = "Cross-attention"
sentence = "{A}"
view = "cross"
layer = 2
head = 3
caption = "First caption."

[[steps]]
sentence = "{B}"
reference = "Please sit down."
causal_mask = false
view = "decoder"
layer = 1
head = 2
step = 2
caption = "Second caption: teacher forcing without the mask."

[[steps]]
sentence = "{A}"
view = "encoder"
head = 9
caption = "never shown"

[[steps]]
sentence = "{B}"
batch_with = "{A}"
view = "masks"
mask = 3
caption = "Fourth caption: the padding."
'''


def test_fields_and_defaults():
    lec = parse_lecture(TINY_LECTURE, "tiny.toml")
    assert lec.title == "Tiny lecture" and len(lec.steps) == 4
    first, second, _, fourth = lec.steps
    assert (first.view, first.layer, first.head, first.decoder_step, first.beam) == ("cross", 2, 3, None, 1)
    assert (second.reference, second.causal_mask, second.decoder_step) == ("Please sit down.", False, 2)
    assert (fourth.batch_with, fourth.view, fourth.mask) == (A, "masks", 3)
    beam = parse_lecture('[[steps]]\nsentence = "나는 학생입니다."\ndecoding = "beam"\n').steps[0]
    assert (beam.decoding, beam.beam, beam.view, beam.layer, beam.head) == ("beam", 4, "cross", 1, 1)


def test_problems_name_the_step_and_field_and_the_lecture_still_opens():
    config = tiny_config()  # 2 + 2 layers, 4 heads
    lec = parse_lecture(TINY_LECTURE)
    problems = check_lecture(lec, config)
    assert problems == ["lecture step 3, head: 9 is out of range 1..4 (the model has 4 heads)"]
    assert [s.ok for s in lec.steps] == [True, True, False, True]
    bad = parse_lecture("""
[[steps]]
sentence = "나는 학생입니다."
haed = 2
[[steps]]
sentence = "나는 학생입니다."
causal_mask = false
layer = "two"
[[steps]]
sentence = "나는 학생입니다."
view = "sideways"
ablate = "2:x"
[[steps]]
sentence = "나는 학생입니다."
reference = "I am a student."
query = 2
force = "The"
[[steps]]
caption = "no sentence"
[[steps]]
sentence = "나는 학생입니다."
view = "encoder"
layer = 3
ablate = "1:5"
ablate_kind = "cross"
""")
    got = check_lecture(bad, config)
    want = [
        "lecture step 1, haed: unknown field (did you mean 'head'?)",
        "lecture step 2, layer: must be a whole number, got 'two'",
        "lecture step 2, causal_mask: false needs a reference",
        "lecture step 3, view: 'sideways' is not one of encoder, decoder, cross, masks",
        "lecture step 3, ablate: item '2:x' is not layer:head",
        "lecture step 4, force_at: force and force_at go together",
        "lecture step 4, force: works on decoded output",
        "lecture step 4, query: works on decoded output",
        "lecture step 5, sentence: missing or empty",
        "lecture step 6, layer: 3 is out of range 1..2 (the model has 2 encoder layers)",
        "lecture step 6, ablate: 1:5: head 5 out of range 1..4",
    ]
    for w in want:
        assert any(p.startswith(w) for p in got), (w, got)
    assert len(got) == len(want), got
    bigger = tiny_config(n_encoder_layers=3)  # another model: its own problems replace the old ones
    assert not any("layer: 3" in p for p in check_lecture(bad, bigger))


def test_files_that_cannot_open(tmp_path):
    with pytest.raises(LectureError, match=r"x\.toml: not valid TOML"):
        parse_lecture("title = \n", "x.toml")
    with pytest.raises(LectureError, match="no steps"):
        parse_lecture('title = "empty"\n')
    with pytest.raises(LectureError, match="cannot read"):
        load_lecture(tmp_path / "missing.toml")


def test_a_saved_step_reads_back(tmp_path):
    step = LectureStep(
        0,
        sentence='그는 "의사"입니다.\\',
        caption="line one\nline two\ttab",
        reference="He is a doctor.",
        causal_mask=False,
        view="decoder",
        layer=2,
        head=3,
        decoder_step=4,
    )
    data = tomllib.loads(step_toml(step))["steps"][0]
    assert data == {
        "sentence": '그는 "의사"입니다.\\',
        "reference": "He is a doctor.",
        "causal_mask": False,
        "view": "decoder",
        "layer": 2,
        "head": 3,
        "step": 4,
        "caption": "line one\nline two\ttab",
    }
    path = tmp_path / "mine.toml"
    assert append_step(path, step, title="Mine") == 1
    beam = LectureStep(0, sentence="나는 학생입니다.", beam=4, decoding="beam", view="masks", mask=2, force="The", force_at=1)
    assert append_step(path, beam) == 2
    lec = load_lecture(path)
    assert lec.title == "Mine" and [s.ok for s in lec.steps] == [True, True]
    again = lec.steps[1]
    assert (again.beam, again.view, again.mask, again.force, again.force_at) == (4, "masks", 2, "The", 1)
    (tmp_path / "broken.toml").write_text("title = [\n", encoding="utf-8")
    with pytest.raises(LectureError):
        append_step(tmp_path / "broken.toml", step)
    assert (tmp_path / "broken.toml").read_text(encoding="utf-8") == "title = [\n"  # left unchanged
