"""Hostile input through the engine, the CLI and the GUI; hostile files through the CLI;
responsiveness during a long beam search. The cases are listed in docs/robustness.md."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import time
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.__main__ import main as cli_main
from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.translate import translate
from core.errors import InputError
from core.tokenizers.bpe import PAD, UNK
from tests.core.test_checkpoint_tokenizer import BAD_CHECKPOINTS, corrupt
from tests.support import ROOT, shipped

HOSTILE = {
    "empty": "",
    "only spaces": "     ",
    "600+ characters": "오늘은 날씨가 좋아서 공원에 갔다. " * 40,
    "NFD jamo": unicodedata.normalize("NFD", "한국어"),
    "emoji inside Korean": "나는 😀 행복해 👍🏽",
    "zero-width space, BOM, ZWJ": "나는\u200b학생\ufeff입니다\u200d.",
    "full-width digits and punctuation": "１２３！？",
    "Latin only": "hello world",
    "digits only": "12345",
    "mixed Korean/English": "왜들 그리 다운돼있어? 뭐가 문제야 say something",
    "control characters and newlines": "나는\x07 학생\n입니다\r\n\t.",
    "single syllable": "나",
}
EMPTY_CASES = {"empty", "only spaces"}


@pytest.fixture(scope="module")
def ck(tiny_checkpoint):
    return load_checkpoint(tiny_checkpoint, device="cpu")


def accounted(tokens: list[str], normalized: str) -> bool:
    """Every non-space character of ``normalized`` appears, in order, in the tokens
    (as itself, inside a subword, or as one visible [UNK] per character)."""
    chars = [c for c in normalized if c != " "]
    i = 0
    for tok in tokens:
        if tok in ("[EOS]", PAD):
            continue
        if tok == UNK:
            i += 1
            continue
        for c in tok.replace("▁", ""):
            if i >= len(chars) or chars[i] != c:
                return False
            i += 1
    return i == len(chars)


def assert_finite(result) -> None:
    m = result.maps
    for t in (m.encoder_self, m.decoder_self, m.cross):
        assert t.isfinite().all()
    assert all(math.isfinite(p) for s in result.steps for _, p in s.top_k)


@pytest.mark.parametrize("name", list(HOSTILE))
def test_engine_handles_hostile_text(ck, name):
    text = HOSTILE[name]
    if name in EMPTY_CASES:
        with pytest.raises(InputError, match="empty"):
            translate(ck, text)
        return
    r = translate(ck, text)
    assert_finite(r)
    normalized = ck.src_tokenizer.normalize(text)
    n = len(ck.src_tokenizer.encode(text).ids)
    if n + 1 > ck.config.max_len:
        assert "only the first" in r.notice  # visible truncation notice
        assert len(r.source.ids) == ck.config.max_len
    else:
        assert accounted(r.source.tokens, normalized), (r.source.tokens, normalized)
    if name == "NFD jamo":
        assert ck.src_tokenizer.encode(text).ids == ck.src_tokenizer.encode("한국어").ids
    if name == "full-width digits and punctuation":
        assert normalized == "123!?"


def run_cli(capsys, *args):
    code = cli_main(["translate", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("name", list(HOSTILE))
def test_cli_gives_translation_or_one_line_error(ck, capsys, name):
    code, out, err = run_cli(capsys, HOSTILE[name], "--checkpoint", str(ck.path), "--json", "--device", "cpu")
    assert "Traceback" not in err
    if name in EMPTY_CASES:
        assert code == 2 and err.count("\n") == 1 and err.startswith("error: ")
    else:
        assert code == 0
        data = json.loads(out)  # json.loads would accept NaN; check explicitly below
        assert "NaN" not in out and "Infinity" not in out
        assert data["tgt_tokens"][0] == "[BOS]"
        t, s = len(data["tgt_tokens"]), len(data["src_tokens"])
        assert len(data["attention"]["cross"][0][0]) == t and len(data["attention"]["cross"][0][0][0]) == s
        assert len(data["masks"]["causal"]) == t and len(data["masks"]["src_key_padding"]) == s


def test_cli_reads_stdin_keeps_blank_lines_aligned(ck):
    lines = "나는 학생입니다.\n\n외로워.\n"
    p = subprocess.run(
        [sys.executable, "-m", "core", "translate", "-", "--checkpoint", str(ck.path)],
        input=lines,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert p.returncode == 0
    out = p.stdout.splitlines()
    assert len(out) == 3 and out[1] == "" and out[0] and out[2]  # one output line per input line
    assert "Traceback" not in p.stderr and "error:" not in p.stderr


def test_cli_invalid_utf8_argument_is_accounted_as_unk(ck):
    p = subprocess.run(
        [
            sys.executable.encode(),
            b"-m",
            b"core",
            b"translate",
            b"\xff\xfe \xea\xb0\x80",
            b"--json",
            b"--checkpoint",
            str(ck.path).encode(),
        ],
        capture_output=True,
        cwd=ROOT,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["src_tokens"].count("[UNK]") >= 2 and "unknown to the model" in data["notice"]


@pytest.mark.parametrize("args", [["--beam", "0"], ["--pad-to", "999"], ["--reference", "   "]])
def test_cli_bad_options_are_one_line_errors(ck, capsys, args):
    code, _, err = run_cli(capsys, "나는 학생", "--checkpoint", str(ck.path), *args)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1


@pytest.mark.parametrize("name,how,msg", BAD_CHECKPOINTS)
def test_cli_bad_checkpoint_is_one_line_error(tmp_path, capsys, tiny_checkpoint, monkeypatch, name, how, msg):
    monkeypatch.chdir(tmp_path)
    d = corrupt(tiny_checkpoint, tmp_path, how)
    code, _, err = run_cli(capsys, "나는", "--checkpoint", str(d))
    assert code == 2 and err.count("\n") == 1 and str(d) in err and "Traceback" not in err
    assert re.search(msg, err)
    assert not (tmp_path / "PWNED").exists()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=80))
def test_random_unicode_never_crashes_or_gives_nan(ck, text):
    try:
        r = translate(ck, text)
    except InputError as exc:
        assert "empty" in str(exc) or "max_len" in str(exc)
        return
    assert_finite(r)
    assert accounted(r.source.tokens, ck.src_tokenizer.normalize(text))


def test_gui_never_blocked_over_100ms_during_long_beam_and_cancel_works(qtbot):
    from PySide6 import QtCore

    from gui.window.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.worker.loaded, timeout=20000):
        win.load_checkpoint(str(shipped()), "cpu")  # the real-size shipped model
    model = win.worker.checkpoint.model
    real_decode = model.decode

    def no_eos_decode(*args, **kwargs):  # keep every hypothesis alive: a long, compute-bound search
        out = real_decode(*args, **kwargs)
        out.logits[..., model.config.eos_id] = float("-inf")
        return out

    model.decode = no_eos_decode
    win.inputs.text.setText("오늘은 날씨가 좋아서 공원에 갔다. " * 40)
    win.inputs.decoding.setCurrentIndex(1)
    win.inputs.beam.setValue(16)
    gaps, last = [], [time.perf_counter()]

    def tick():
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QtCore.QTimer()
    timer.timeout.connect(tick)
    timer.start(10)
    win.translate()
    qtbot.waitUntil(win.inputs.cancel_button.isEnabled, timeout=5000)
    qtbot.wait(300)  # let the search run while the GUI thread keeps ticking
    assert win.inputs.cancel_button.isEnabled()
    with qtbot.waitSignal(win.worker.cancelled, timeout=20000):
        qtbot.mouseClick(win.inputs.cancel_button, QtCore.Qt.MouseButton.LeftButton)
    timer.stop()
    assert len(gaps) > 10
    assert max(gaps[1:]) < 0.1, f"GUI thread blocked for {max(gaps[1:]) * 1000:.0f} ms"
    assert win.result is None  # a cancelled search shows nothing new
    win.close()
