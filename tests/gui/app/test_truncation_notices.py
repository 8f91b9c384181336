"""No silent truncation: a cut source, reference or output always gets a notice (CLI stderr and
JSON ``notice``, app status bar), and a cut reference never ends in a fake [EOS]."""

from __future__ import annotations

import dataclasses
import json

import pytest

from core.__main__ import main
from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.translate import reference_view, translate
from core.tokenizers.bpe import EOS
from tests.core.test_decoding import SENTENCES, Scripted

LONG_REF = "the cat sat on the mat and the dog ran to the park " * 12


@pytest.fixture(scope="module")
def ck(tiny_checkpoint):
    return load_checkpoint(tiny_checkpoint, device="cpu")


def test_reference_view_fits_or_is_cut_without_eos():
    assert reference_view([5, 6, 7], 4, 1, 2) == ([1, 5, 6, 7], [5, 6, 7, 2], "")
    tgt_in, targets, notice = reference_view([5, 6, 7, 8, 9], 4, 1, 2)
    assert tgt_in == [1, 5, 6, 7] and targets == [5, 6, 7, 8]  # the real next token, not EOS
    assert "reference has 5 tokens; only the first 3" in notice


def test_long_reference_is_cut_with_notice_and_real_last_target(ck):
    ref_ids = ck.tgt_tokenizer.encode(LONG_REF).ids
    n = ck.config.max_len
    assert len(ref_ids) > n  # the case under test
    r = translate(ck, SENTENCES[0], reference=LONG_REF)
    assert f"reference has {len(ref_ids)} tokens; only the first {n - 1}" in r.notice
    assert len(r.steps) == n and len(r.maps.tgt_tokens) == n
    assert [s.token_id for s in r.steps] == ref_ids[:n]
    assert r.steps[-1].token != EOS and r.steps[-1].token_id != ck.config.eos_id
    assert r.maps.cross.shape[2] == n


def test_reference_that_fits_ends_with_eos_and_no_notice(ck):
    r = translate(ck, SENTENCES[0], reference="the cat sat")
    ref_ids = ck.tgt_tokenizer.encode("the cat sat").ids
    assert [s.token_id for s in r.steps] == ref_ids + [ck.config.eos_id]
    assert "reference" not in r.notice


def test_output_stopped_by_the_budget_gets_a_notice(ck):
    never_eos = Scripted(ck.model, lambda t, prev: {12: 0.99})
    r = translate(dataclasses.replace(ck, model=never_eos), SENTENCES[0])
    assert len(r.steps) == r.source.n_real * 2 + 10 and all(s.token_id == 12 for s in r.steps)
    assert "output stopped at the length limit" in r.notice
    b = translate(dataclasses.replace(ck, model=never_eos), SENTENCES[0], beam=2)
    assert "output stopped at the length limit" in b.notice


def test_cli_reports_a_cut_reference_on_stderr_and_in_json(tiny_checkpoint, capsys):
    assert (
        main(
            [
                "translate",
                SENTENCES[0],
                "--checkpoint",
                str(tiny_checkpoint),
                "--device",
                "cpu",
                "--reference",
                LONG_REF,
                "--json",
            ]
        )
        == 0
    )
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert "reference has" in data["notice"] and "reference has" in err
    assert data["steps"][-1]["token"] != EOS


def test_cli_reports_a_cut_source(tiny_checkpoint, capsys):
    assert main(["translate", "가나다라마바사 " * 100, "--checkpoint", str(tiny_checkpoint), "--device", "cpu", "--json"]) == 0
    out, err = capsys.readouterr()
    assert "only the first" in json.loads(out)["notice"] and "notice: input has" in err


def test_gui_status_bar_shows_a_cut_reference(qtbot, tiny_checkpoint):
    from gui.window.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    win.load_checkpoint(str(tiny_checkpoint), "cpu")
    qtbot.waitUntil(lambda: win.model_info != "no model", timeout=20000)  # _on_loaded has run
    win.inputs.text.setText(SENTENCES[0])
    win.inputs.reference.setText(LONG_REF)
    win.translate()
    # wait for the window to have *handled* the result (waitSignal returns when the worker emits,
    # possibly before the queued slot on the GUI thread has run)
    qtbot.waitUntil(lambda: win.result is not None and "reference has" in win.status.currentMessage(), timeout=30000)
    assert win.result.steps[-1].token != EOS
    win.close()
