"""What a translation says about itself reaches the reader where they look: input that is not
Korean and the sentence score (mean log-probability per token, with a low-confidence flag) are on
the translation line, in Present mode's caption and in ``--json``; symbols-only input comes
through unchanged, with the model's own output named."""

from __future__ import annotations

import html
import json
import math

import pytest
from PySide6 import QtCore

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


def test_cut_input_unknown_characters_cut_output_and_low_score_are_on_the_line_and_in_present_mode(qtbot, tiny_checkpoint):
    """The tiny random model on 100 repeats of a sentence it cannot read: the source is cut to
    max_len - 1 tokens, some characters are [UNK], the output runs into the length budget and the
    score is low. Each warning is on the translation line and in Present mode's caption, the
    source's at step 0 already, the output's once it is finished."""
    from core.tokenizers.bpe import UNK
    from gui.window.view_menu import toggle_present
    from tests.support.gui import do, open_window

    ck = load_checkpoint(tiny_checkpoint, device="cpu")
    text = "가나다라마바사 " * 100
    max_len = ck.config.max_len
    tokens = ck.src_tokenizer.encode(text).tokens
    assert len(tokens) > max_len  # the case under test
    n_unk = tokens[: max_len - 1].count(UNK)  # the characters the kept part shows as [UNK]
    assert n_unk > 1
    source_warnings = [f"input cut to its first {max_len - 1} tokens", f"{n_unk} unknown characters shown as [UNK]"]
    win = open_window(qtbot, tiny_checkpoint)
    try:
        win.inputs.text.setText(text)
        do(qtbot, win, win.translate)
        assert win.vm.step == 0
        line = win.translation_label.text()
        assert all(w in line for w in source_warnings) and "output stopped" not in line
        do(qtbot, win, lambda: qtbot.mouseClick(win.controls.end_button, QtCore.Qt.MouseButton.LeftButton))
        r = win.vm.result
        assert len(r.steps) == max_len - 1 and r.steps[-1].token != "[EOS]"  # the budget ran out
        score = sum(math.log(next(p for tok, p in s.top_k if tok == s.token)) for s in r.steps) / len(r.steps)
        assert score < LOW_CONFIDENCE_NATS
        expected = [
            *source_warnings,
            f"output stopped at the length limit ({max_len - 1} tokens, no [EOS])",
            f"low confidence ({score:.2f} nats/token)",
        ]
        line = win.translation_label.text()
        # in this order, in red, before the translation (whose long text shows only its first lines)
        red = f"<span style='color:#b00000'><b>{' · '.join(html.escape(w) for w in expected)}</b></span>"
        assert line.startswith(red + " &nbsp;<b>Translation:</b> ")
        toggle_present(win)
        present = win.present_window
        present.refresh()
        caption = present.caption.text()
        assert caption.startswith(" · ".join("⚠ " + w for w in expected) + "\n" + text.strip()[:20])
        source_line = caption.split("\n")[1].split("  →  ")[0]  # the 800-character input, cut to one line
        assert source_line.endswith("…") and len(source_line) < len(text) // 4
        present.close()
    finally:
        win.close()


def test_a_cut_reference_is_on_the_line_and_in_present_mode(qtbot, tiny_checkpoint):
    from gui.window.view_menu import toggle_present
    from tests.support.gui import do, open_window

    ck = load_checkpoint(tiny_checkpoint, device="cpu")
    reference = "the cat sat on the mat and the dog ran to the park " * 12
    assert len(ck.tgt_tokenizer.encode(reference).ids) > ck.config.max_len
    win = open_window(qtbot, tiny_checkpoint)
    try:
        win.inputs.text.setText("고양이")
        win.inputs.reference.setText(reference)
        do(qtbot, win, win.translate)
        warning = f"reference cut to its first {ck.config.max_len - 1} tokens"  # fed to the decoder
        assert warning in win.translation_label.text()
        toggle_present(win)
        win.present_window.refresh()
        assert "⚠ " + warning in win.present_window.caption.text()
        win.present_window.close()
    finally:
        win.close()
