"""English monolingual extraction and back-translation: real files, exact filters, resumable output."""

from __future__ import annotations

import sys

import pytest

import core.training.back_translate as bt
from core.checkpoints.checkpoint import load_checkpoint
from core.evaluation.evaluate import translate_corpus
from core.training.monolingual import docstring_sentences, drop_overlaps, english_lines, wordnet_examples

WORDNET_NOUN = """\
  1 This software and database is being provided to you, the LICENSEE, "quoted licence text here"
00001740 03 n 01 entity 0 003 ~ 00001930 n 0000 | that which is perceived; "the cat sat on the mat"; "a dog"
00002137 03 n 02 abstraction 0 abstract_entity 0 010 | a general concept; "the idea took shape slowly"; "the cat sat on the mat"
"""
WORDNET_VERB = """00001740 29 v 01 breathe 0 | draw air; "she breathed deeply before the exam"
"""


def test_wordnet_examples_reads_quoted_examples_of_glosses_only(tmp_path):
    (tmp_path / "data.noun").write_text(WORDNET_NOUN, encoding="latin-1")
    (tmp_path / "data.verb").write_text(WORDNET_VERB, encoding="latin-1")
    got = wordnet_examples(tmp_path)
    # the licence header's quote is skipped, "a dog" is under 3 words, the repeat is kept once
    assert got == ["the cat sat on the mat", "the idea took shape slowly", "she breathed deeply before the exam"]


def test_wordnet_examples_names_the_package_when_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match="wordnet-base"):
        wordnet_examples(tmp_path)


def test_docstring_sentences_keep_prose_and_topic(tmp_path, monkeypatch):
    pkg = tmp_path / "fakepkg_bt"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('"""The encoder reads every token of the sentence. Short one."""\n')
    (pkg / "mod.py").write_text(
        'def f():\n    """Each attention head looks at the keys of the sequence.\n\n'
        '    >>> f(x=1)  # code is skipped\n\n    The weather report comes out every morning at six.\n    """\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("fakepkg_bt", None)
    every = docstring_sentences("fakepkg_bt")
    assert every == [
        "The encoder reads every token of the sentence.",
        "Each attention head looks at the keys of the sequence.",
        "The weather report comes out every morning at six.",
    ]
    assert docstring_sentences("fakepkg_bt", topic=("attention", "encoder")) == every[:2]
    with pytest.raises(ModuleNotFoundError):
        docstring_sentences("no_such_package_here_bt")


def test_english_lines_reads_every_reference_of_a_fixture(tmp_path):
    f = tmp_path / "set.tsv"
    f.write_text("# comment\n나는 학생이다.\tI am a student. | I'm a student.\n", encoding="utf-8")
    assert english_lines(f) == ["I am a student.", "I'm a student."]


def test_drop_overlaps_removes_exact_and_near_duplicates_and_keeps_the_rest():
    refs = ["The cat drinks water every morning.", "Attention weights sum to one over the keys."]
    lines = [
        "the cat drinks water every morning",  # exact after normalisation
        "The cat drinks water every evening.",  # near duplicate
        "A dog sleeps under the table.",
        "Attention weights sum to one over the keys!",
    ]
    kept, dropped = drop_overlaps(lines, refs, threshold=0.6)
    assert kept == ["A dog sleeps under the table."] and dropped == 3
    # brute force over every pair agrees with the prefix-filtered search
    from core.evaluation.overlap import trigrams

    brute = [x for x in lines if all(len(trigrams(x) & trigrams(r)) / len(trigrams(x) | trigrams(r)) < 0.6 for r in refs)]
    assert brute == kept


@pytest.mark.parametrize(
    "ko,en,kept",
    [
        ("고양이가 물을 마셔요.", "The cat drinks water.", True),
        ("The cat drinks water.", "The cat drinks water.", False),  # no Hangul: a copy, not a translation
        ("고양이 고양이 고양이", "cats and cats", False),  # a decoding loop: a word three times
        ("직원원원들은 버터를 썼다.", "The staff used butter.", False),  # a syllable three times
        ("정말 정말 좋아요.", "I really, really like it.", True),  # twice is language, not a loop
        ("가", "The cat drinks water every single morning before work.", False),  # far too short
        ("", "Hello.", False),
    ],
)
def test_keep_pair(ko, en, kept):
    assert bt.keep_pair(ko, en) is kept


def test_back_translate_resumes_after_a_crash_with_the_same_output(tmp_path, tiny_checkpoint, monkeypatch):
    lines = ["나는 학생이다.", "고양이가 물을 마셔요.", "안녕하세요.", "물 좀 주세요.", "학교에 가요."]
    keep_all = lambda ko, en: True  # noqa: E731  (the tiny random model outputs no Hangul)
    whole = bt.back_translate(str(tiny_checkpoint), lines, tmp_path / "a", chunk=2, keep=keep_all)
    assert whole == {"done": 5, "kept": 5, "total": 5}
    expected = translate_corpus(load_checkpoint(tiny_checkpoint, device="cpu"), lines)
    assert (tmp_path / "a.ko").read_text(encoding="utf-8").splitlines() == expected
    assert (tmp_path / "a.en").read_text(encoding="utf-8").splitlines() == lines

    calls = {"n": 0}
    real = bt.translate_corpus

    def dies_on_second_chunk(*a, **k):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(bt, "translate_corpus", dies_on_second_chunk)
    with pytest.raises(KeyboardInterrupt):
        bt.back_translate(str(tiny_checkpoint), lines, tmp_path / "b", chunk=2, keep=keep_all)
    assert len((tmp_path / "b.ko").read_text(encoding="utf-8").splitlines()) == 2
    with (tmp_path / "b.ko").open("a", encoding="utf-8") as f:  # a stop after appending, before the progress file
        f.write("partial chunk line\n")
    monkeypatch.setattr(bt, "translate_corpus", real)
    assert bt.back_translate(str(tiny_checkpoint), lines, tmp_path / "b", chunk=2, keep=keep_all)["done"] == 5
    for ext in (".ko", ".en"):
        assert (tmp_path / f"b{ext}").read_text(encoding="utf-8") == (tmp_path / f"a{ext}").read_text(encoding="utf-8")


def test_sentence_case_adds_a_stop_only_to_clauses(tmp_path):
    (tmp_path / "verb.exc").write_text("ran run\n", encoding="latin-1")
    (tmp_path / "index.verb").write_text(
        "  1 licence line\ntickle v 1 1 @ 1 0 01\nfoot v 1 1 @ 1 0 02\nbreak_down v 1 0\n", encoding="latin-1"
    )
    from core.training.monolingual import sentence_case, wordnet_past_forms

    past = wordnet_past_forms(tmp_path)
    assert past == {"ran", "tickled", "footed"}
    assert sentence_case("the grass tickled her calves", past) == "The grass tickled her calves."
    assert sentence_case("he was asking", past) == "He was asking."
    assert sentence_case("a terrible curse", past) == "A terrible curse"
    assert sentence_case("a slow flat-footed walk", past) == "A slow flat-footed walk"  # hyphenated: not a verb
    assert sentence_case("did she go?", past) == "Did she go?"
