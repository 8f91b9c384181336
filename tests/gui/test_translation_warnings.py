"""What a translation says about itself reaches the reader where they look: input that is not
Korean and the sentence score (mean log-probability per token, with a low-confidence flag) are on
the translation line, in Present mode's caption and in ``--json``; symbols-only input comes
through unchanged, with the model's own output named."""

from __future__ import annotations

import json
import math

import pytest

from core.__main__ import main as cli_main
from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.confidence import LOW_CONFIDENCE_NATS, has_hangul, symbols_only
from core.decoding.translate import translate
from tests.support import shipped
from tests.support.gui import type_and_translate


@pytest.fixture(scope="module")
def ck():
    return load_checkpoint(shipped(), device="cpu")


def test_hangul_and_symbol_detection():
    assert has_hangul("나는 학생") and has_hangul("ㅋㅋ") and not has_hangul("The decoder 🙂")
    assert symbols_only("🙂🙂🙂") and symbols_only("→ ★ !!") and not symbols_only("abc 🙂") and not symbols_only("3")
    assert not symbols_only("   ")


def test_confidence_is_the_mean_log_probability_per_token(ck):
    r = translate(ck, "나는 학생입니다.")
    total = sum(math.log(next(p for tok, p in s.top_k if tok == s.token)) for s in r.steps)
    assert r.confidence == pytest.approx(total / len(r.steps), abs=1e-4)  # the probabilities on screen
    assert r.confidence <= 0 and not r.not_korean
    assert r.low_confidence == (r.confidence < LOW_CONFIDENCE_NATS)
    beam = translate(ck, "나는 학생입니다.", beam=4)
    assert beam.confidence == pytest.approx(beam.logprob / len(beam.steps), abs=1e-6)
    forced = translate(ck, "나는 학생입니다.", reference="I am a student.")
    assert forced.confidence is None and not forced.low_confidence


def test_cli_json_carries_the_notice_and_the_score(capsys):
    code = cli_main(["translate", "The decoder looks at the encoder output.", "--checkpoint", str(shipped()), "--json"])
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert code == 0 and out["not_korean"] is True and "no Korean (Hangul) text" in out["notice"]
    assert out["confidence"] < 0 and out["low_confidence"] == (out["confidence"] < LOW_CONFIDENCE_NATS)
    assert out["translation"]  # still translated
    assert "notice: the input has no Korean" in captured.err
    code = cli_main(["translate", "🙂🙂🙂", "--checkpoint", str(shipped()), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["translation"] == "🙂🙂🙂" and "passed through unchanged" in out["notice"]


def test_window_and_present_mode_show_the_warning_and_the_score(qtbot):
    from gui.window.view_menu import toggle_present
    from tests.support.gui import open_window

    win = open_window(qtbot, shipped())
    try:
        type_and_translate(qtbot, win, "The decoder looks at the encoder output.")
        line = win.translation_label.text()
        assert "<b>input is not Korean" in line
        r = win.vm.result
        assert f"{r.confidence:.2f} nats/token" in line
        toggle_present(win)
        present = win.present_window
        present.refresh()
        assert "⚠ input is not Korean" in present.caption.text()
        assert f"{r.confidence:.2f} nats/token" in present.caption.text()
        present.close()
        type_and_translate(qtbot, win, "나는 학생입니다.")
        line = win.translation_label.text()
        assert "not Korean" not in line and f"confidence {win.vm.result.confidence:.2f} nats/token" in line
    finally:
        win.close()
