"""Text at the edges: invisible format characters never reach the tokenizer, and every file and
stdin is split on \\n only (as sacreBLEU and wc -l count), so no line shifts against its partner."""

from __future__ import annotations

import subprocess
import sys

import pytest

from core.checkpoints.checkpoint import load_checkpoint
from core.evaluation.lecture_check import load_fixture
from core.textio import clean_text, read_aligned, read_lines, split_lines
from core.training.data import read_parallel
from tests.support import ROOT, SHIPPED

INVISIBLE = ["\ufeff", "\u200b", "\u200c", "\u200d", "\u200e", "\u200f", "\u2060"]
SEPARATORS = ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\r"]


def test_clean_text_removes_every_invisible_format_character():
    for ch in INVISIBLE:
        assert clean_text(f"{ch}감사{ch}합니다{ch}") == "감사합니다", repr(ch)
    assert clean_text("a\ud800b") == "a\ufffdb"  # an undecodable byte from a command line
    assert clean_text("나는 학생입니다.") == "나는 학생입니다."


def test_split_lines_splits_on_newline_only():
    text = "".join(f"line{i}{sep}x\n" for i, sep in enumerate(SEPARATORS))
    assert len(split_lines(text)) == len(SEPARATORS) == text.count("\n")
    assert split_lines("a\r\nb\r\n") == ["a", "b"]  # CRLF files
    assert split_lines("\ufeffa\nb") == ["a", "b"]  # a byte-order mark at the start of a file
    assert split_lines("") == [] and split_lines("\n") == [""]


@pytest.fixture(scope="module")
def shipped():
    return load_checkpoint(SHIPPED, device="cpu")


def test_a_byte_order_mark_or_zero_width_space_does_not_change_the_tokens(shipped):
    tok = shipped.src_tokenizer
    plain = tok.encode("감사합니다")
    for ch in INVISIBLE:
        enc = tok.encode(f"{ch}감사{ch}합니다")
        assert enc.ids == plain.ids, repr(ch)
        assert tok.unk_id not in enc.ids
    assert tok.normalize("\ufeff감사합니다") == tok.normalize("감사합니다")


def test_translate_stdin_keeps_one_output_line_per_input_line():
    data = ("\ufeff감사합니다\n감사합니다\nA\u2028B\n\x0b\x0c\x1e\x85\n\r\n").encode() + b"\xff\xfe bad bytes\n"
    res = subprocess.run([sys.executable, "-m", "core", "translate", "-"], input=data, cwd=ROOT, capture_output=True, timeout=300)
    assert res.returncode == 0, res.stderr[-1000:]
    out = res.stdout.decode().split("\n")[:-1]
    assert len(out) == data.count(b"\n") == 6
    assert out[0] == out[1] and out[0].strip()  # the BOM line translates like the plain one
    assert out[3] == out[4] == ""  # lines of only separators or only \r stay blank


def test_files_with_unicode_line_separators_stay_aligned(tmp_path):
    (tmp_path / "p.ko").write_text("가\u2028나\n다\n", encoding="utf-8")
    (tmp_path / "p.en").write_text("a\u2028b\nc\n", encoding="utf-8")
    assert read_parallel(str(tmp_path / "p")) == [("가\u2028나", "a\u2028b"), ("다", "c")]
    (tmp_path / "q.ko").write_text("가\n나\n", encoding="utf-8")
    (tmp_path / "q.en").write_text("a\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"q.ko has 2 lines but .*q.en has 1"):
        read_parallel(str(tmp_path / "q"))
    with pytest.raises(ValueError, match="has 2 lines but"):
        read_aligned(tmp_path / "q.ko", tmp_path / "q.en")
    (tmp_path / "f.tsv").write_text("# c\n가\u2028나\ta | b\n", encoding="utf-8")
    assert [i.source for i in load_fixture(tmp_path / "f.tsv")] == ["가\u2028나"]
    assert read_lines(tmp_path / "f.tsv")[1].startswith("가\u2028나")


def test_evaluate_scores_lines_split_on_newline_only(shipped, tmp_path):
    from core.evaluation.evaluate import evaluate_files

    (tmp_path / "src").write_text("나는 학생입니다.\u2028\n감사합니다.\n고양이가 있어요.\n", encoding="utf-8")
    (tmp_path / "ref").write_text("I am a student.\u2028\nThank you.\nThere is a cat.\n", encoding="utf-8")
    r = evaluate_files(shipped, str(tmp_path / "src"), str(tmp_path / "ref"))
    assert r["lines"] == 3


def test_a_file_that_is_not_utf8_is_named_with_its_byte_and_line(tmp_path, capsys):
    from core.__main__ import main as cli_main

    src, ref = tmp_path / "bad.ko", tmp_path / "bad.en"
    src.write_bytes("첫 줄\n".encode() + b"\xff\xfe bad\n")
    ref.write_text("first\nsecond\n", encoding="utf-8")
    code = cli_main(["evaluate", "--src", str(src), "--ref", str(ref), "--checkpoint", "ko-en-nc"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err == f"error: {src}: not UTF-8 text (byte 0xff on line 2: invalid start byte); save it as UTF-8"
