"""The live decoder (one encode; step, back, seek, fork, beam paths) and the Qt-free view model,
compared with independent runs. No Qt is imported here."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.live import LiveDecoder
from core.decoding.session import DecodeSession, teacher_forced
from core.decoding.translate import translate
from core.errors import InputError
from gui.state.view_model import ViewModel

TEXT = "집에 누군가 있어?"


@pytest.fixture(scope="module")
def ck(tiny_checkpoint):
    return load_checkpoint(tiny_checkpoint, device="cpu")


def test_view_model_is_qt_free():
    code = (
        "import sys, gui.state.view_model; print(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parents[3]
    )
    assert out.stdout.strip() == "[]"


def test_live_step_runs_exactly_one_decoder_step_and_back_step_is_bit_identical(ck, monkeypatch):
    live = LiveDecoder(ck, TEXT)
    calls = []
    real = ck.model.decode
    monkeypatch.setattr(ck.model, "decode", lambda tgt, *a, **k: calls.append(tuple(tgt.shape)) or real(tgt, *a, **k))
    assert live.state().result.steps == [] and live.state().final is None
    for _ in range(3):
        live.step()
    assert calls == [(1, 1)] * 3  # one new position per Step, on the cache
    before = live.state().result.maps
    live.back()
    assert len(calls) == 3  # Back recomputes nothing
    live.step()
    after = live.state().result.maps
    for name in ("decoder_self", "cross", "encoder_self"):
        assert torch.equal(getattr(before, name), getattr(after, name))


def test_live_greedy_reaches_the_translation_and_shows_it_only_when_produced(ck):
    full = translate(ck, TEXT)
    live = LiveDecoder(ck, TEXT)
    vm = ViewModel()
    vm.set_state(live.state())
    assert vm.step == 0 and vm.full_text() is None and "not produced yet" in vm.translation_html()
    live.seek(2)
    vm.set_state(live.state())
    assert vm.step == 2 and vm.tokens_at() == [s.token for s in full.steps[:2]] and vm.full_text() is None
    live.seek(10**6)
    st = live.state()
    vm.set_state(st)
    assert st.finished and st.result.translation == full.translation and vm.full_text() == full.translation
    assert vm.slider_max == len(full.steps) == vm.n_steps
    shown = LiveDecoder(ck, TEXT, show_full=True)
    vm.set_state(shown.state())
    assert vm.step == 0 and vm.full_text() is None  # the option is off in the view model
    vm.set_show_full(True)
    assert vm.full_text() == full.translation


def test_live_beam_steps_through_the_best_hypothesis_and_any_clicked_one(ck):
    full = translate(ck, TEXT, beam=3)
    live = LiveDecoder(ck, TEXT, beam=3)
    live.seek(10**6)
    st = live.state()
    assert [s.token_id for s in st.result.steps] == [s.token_id for s in full.steps]
    assert st.result.translation == full.translation and st.finished
    vm = ViewModel()
    vm.set_state(st)
    rows = vm.beam_rows()
    assert rows and sum(cur for kind, _, cur in rows if kind == "finished") <= 1
    for _kind, row, _ in rows:
        assert row.score == pytest.approx(row.logprob / ((5 + len(row.ids) + row.finished) / 6) ** 0.6, abs=1e-5)
    live_rows = [row for kind, row, _ in rows if kind == "live"]
    other = live_rows[-1]
    live.choose_path(other.ids, finished=False)
    st = live.state()
    assert [s.token_id for s in st.result.steps] == other.ids
    tf = teacher_forced(ck.model, st.result.source.ids, [ck.config.start_id] + other.ids[:-1], [], [])
    torch.testing.assert_close(st.result.maps.decoder_self, tf.maps.decoder_self, atol=1e-5, rtol=0)
    total = float(tf.logits.log_softmax(-1)[torch.arange(len(other.ids)), other.ids].sum())
    assert other.logprob == pytest.approx(total, abs=1e-4)


def test_fork_continues_from_the_forced_token_and_back_returns_to_the_fork_point(ck):
    live = LiveDecoder(ck, TEXT)
    live.seek(2)
    runner_up = live.state().result.steps[1].top_ids[1]
    live.fork(2, [runner_up])
    st = live.state()
    orig = translate(ck, TEXT)
    assert st.original.translation == orig.translation and st.fork_point == 2 and st.finished
    steps = st.result.steps
    assert steps[1].token_id == runner_up and steps[1].forced and not any(s.forced for s in steps[2:])
    assert [s.token_id for s in steps[:1]] == [s.token_id for s in orig.steps[:1]]
    # the continuation equals teacher forcing on the forked prefix
    s = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, TEXT)
    tf = teacher_forced(ck.model, s.source.ids, [ck.config.start_id] + [x.token_id for x in steps[:-1]], [], [])
    logp = tf.logits.log_softmax(-1)[torch.arange(len(steps)), [x.token_id for x in steps]]
    assert st.result.logprob == pytest.approx(float(logp.sum()), abs=1e-4)
    assert st.original.logprob == pytest.approx(orig.logprob, abs=1e-5)
    vm = ViewModel()
    vm.set_state(st)
    (l1, t1, p1), (l2, t2, p2) = vm.side_by_side()
    assert (t1, p1) == (orig.translation, st.original.logprob) and (t2, p2) == (st.result.translation, st.result.logprob)
    assert live.back_to_fork() and len(live.session.steps) == 2 and live.session.steps[1].token_id == runner_up
    live.back()
    live.step()  # stepping again keeps the forced token
    assert live.session.steps[1].token_id == runner_up
    live.unfork()
    assert live.state().original is None and live.session.steps[1].token_id == orig.steps[1].token_id
    with pytest.raises(InputError):
        live.fork(1, [])


def test_view_model_state_and_teacher_forcing_rows(ck):
    r = translate(ck, TEXT, reference="Is anybody home?", top_k=1)
    vm = ViewModel()
    v0 = vm.version
    vm.set_state(r, step=2)
    assert not vm.live and vm.step == 2 and vm.n_steps == len(r.steps) == vm.slider_max
    assert vm.full_text() == "Is anybody home?"
    rows = vm.reference_rows()
    assert [row.token for row in rows] == [s.token for s in r.steps[:2]]
    for row, s in zip(rows, r.steps):
        assert row.prob == pytest.approx(math.exp(s.logprob)) and row.hit == (s.argmax == s.token)
    assert "perplexity" in vm.loss_text() and f"{r.loss:.3f}" in vm.loss_text()
    assert vm.next_token_attention() == 0.0  # the causal mask: exact zeros above the diagonal
    off = translate(ck, TEXT, reference="Is anybody home?", causal=False)
    vm.set_state(off)
    w = off.maps.decoder_self
    t = w.shape[-1]
    expect = sum(float(w[:, :, i, i + 1].mean()) for i in range(t - 1)) / (t - 1)
    assert vm.next_token_attention() == pytest.approx(expect, abs=1e-6) and expect > 0
    vm.set_state(r, step=2)
    assert vm.set_step(999) == len(r.steps) and vm.set_step(-3) == 0
    vm.set_kind("decoder")
    vm.select(1, 3)
    assert (vm.kind, vm.selected) == ("decoder", (1, 3)) and vm.version > v0
    vm.set_kind("masks")
    assert vm.selected == (0, 0)
    with pytest.raises(ValueError):
        vm.set_kind("nonsense")
    assert vm.candidates()[0] == []  # step 0
    vm.set_step(1)
    assert vm.candidates() == (r.steps[0].top_k, r.steps[0].token, None)


def test_view_model_calls_every_subscriber_after_each_change_even_when_one_fails(caplog):
    from gui.state.view_model import ViewModel

    vm = ViewModel()
    seen = []

    def broken():
        raise RuntimeError("a panel bug")

    vm.subscribe(broken)
    vm.subscribe(lambda: seen.append((vm.version, vm.kind)))
    vm.set_kind("encoder")
    vm.select(1, 2)
    assert seen == [(1, "encoder"), (2, "encoder")] and vm.selected == (1, 2)
    assert "a view-model follower failed" in caplog.text
    vm.unsubscribe(broken)


def test_the_view_model_clamps_its_selection_before_any_subscriber_reads_it():
    """A head beyond the result's layers and heads, or a derived cell the view lacks, is clamped
    or dropped by the change itself: a subscriber reads a valid selection, once per change, and
    the frame it is handed shows that very head."""
    from bench.run import synthetic_translation
    from gui.state.view_model import ViewModel

    r = synthetic_translation(2, 4, 5)  # 2 layers x 4 heads, 5 steps
    vm = ViewModel()
    seen = []
    vm.subscribe(lambda: seen.append((vm.version, vm.selected, vm.derived, vm.frame().enlarged.key)))
    vm.set_state(r)
    vm.select(7, 9)
    assert seen[-1] == (2, (1, 3), None, (1, 3))
    vm.select(-3, 2)
    assert seen[-1] == (3, (0, 2), None, (0, 2))
    vm.set_kind("encoder")
    vm.select_derived(("rollout", 0))
    assert seen[-1][2:] == (("rollout", 0), ("rollout", 0))
    vm.set_kind("cross")  # the rollout is the encoder's alone: dropped, the head comes back
    assert seen[-1][1:] == ((0, 2), None, (0, 2)) and len(seen) == 6
    assert vm.frame() is vm.frame()  # one frame per change, the same object for every reader
