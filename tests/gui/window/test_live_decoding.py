"""The live app, offscreen: stepping runs the model one decoder step at a time, forcing a token
forks the translation, teacher forcing teaches, padding (the demo and a batch) shows masked columns,
the beam is visible. Everything drawn is compared with an independent run of core."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from PySide6 import QtCore

from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.batch import translate_batch
from core.decoding.session import DecodeSession, teacher_forced
from core.decoding.translate import translate
from tests.support.gui import do, type_and_translate


def test_padding_demo_shows_masked_pad_columns(qtbot, window):
    window.inputs.pad_to.setValue(20)
    result = type_and_translate(qtbot, window)
    window.set_view("cross")
    s_real = result.source.n_real
    img = window.heatmap.image.image
    assert img.shape[1] == 20 and (img[:, s_real:] == 0).all()
    assert window.heatmap.mask[:, s_real:].all() and not window.heatmap.mask[:, :s_real].any()
    assert window.masks.encoder.mask[0].tolist() == [False] * s_real + [True] * (20 - s_real)


TEXT = "집에 누군가 있어?"


LONG = "집에 누군가 있어? 제발 앉아. 외로워. 나는 학생입니다."


@pytest.fixture(scope="module")
def ck(tiny_checkpoint):
    return load_checkpoint(tiny_checkpoint, device="cpu")


def click(qtbot, button):
    qtbot.mouseClick(button, QtCore.Qt.MouseButton.LeftButton)


def test_step_runs_the_model_live_and_back_step_is_bit_identical(qtbot, window, ck):
    window.inputs.text.setText(TEXT)
    do(qtbot, window, window.translate)
    full = translate(ck, TEXT)
    assert window.vm.step == 0 and len(window.result.steps) == 0
    label = window.translation_label.text()
    assert "not produced yet" in label and (full.translation not in label or not full.translation)
    for _ in range(3):
        do(qtbot, window, lambda: click(qtbot, window.controls.step_button))
    assert window.vm.step == 3 and len(window.result.steps) == 3  # the worker decoded exactly 3 steps
    s = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, TEXT)
    for _ in range(3):
        s.step()
    window.set_view("cross")
    window.select(1, 2)
    np.testing.assert_allclose(window.heatmap.image.image, s.maps().cross[1, 2].numpy(), atol=1e-6)
    before = window.heatmap.image.image.copy()
    do(qtbot, window, lambda: click(qtbot, window.controls.back_button))
    assert window.vm.step == 2 and window.heatmap.image.image.shape[0] == 2
    do(qtbot, window, lambda: click(qtbot, window.controls.step_button))
    assert np.array_equal(window.heatmap.image.image, before)  # bit-identical
    do(qtbot, window, lambda: click(qtbot, window.controls.end_button))
    assert window.vm.state.finished and window.result.translation == full.translation
    assert full.translation in window.translation_label.text()


def test_clicking_a_candidate_forks_and_shows_both_translations(qtbot, window, ck):
    window.inputs.text.setText(TEXT)
    do(qtbot, window, window.translate)
    for _ in range(2):
        do(qtbot, window, lambda: click(qtbot, window.controls.step_button))
    step = window.result.steps[1]
    forced = step.top_ids[1]
    vb = window.topk.getPlotItem().vb
    pos = vb.mapViewToScene(QtCore.QPointF(step.top_k[1][1] / 2, 1.0))
    do(
        qtbot,
        window,
        lambda: qtbot.mouseClick(window.topk.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=window.topk.mapFromScene(pos)),
    )
    st = window.vm.state
    assert st.fork_point == 2 and st.result.steps[1].token_id == forced and st.result.steps[1].forced
    # independent: greedy with the same token forced at step 2
    s = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, TEXT)
    s.step()
    s.step(force=forced, forced=True)  # a forced token: the output budget counts after it
    s.run()
    assert st.result.translation == s.translation
    tf = teacher_forced(ck.model, s.source.ids, [ck.config.start_id] + s.output_ids[:-1], [], [])
    total = float(tf.logits.log_softmax(-1)[torch.arange(len(s.steps)), s.output_ids].sum())
    text = window.live.fork.compare.text()
    assert f"{total:.3f}" in text and f"{translate(ck, TEXT).logprob:.3f}" in text
    do(qtbot, window, lambda: click(qtbot, window.controls.back_button))
    assert window.vm.step == 2  # Back from the end returns to the fork point
    window.live.fork.word.setText("home")
    do(qtbot, window, lambda: click(qtbot, window.live.fork.force_button))
    ids = ck.tgt_tokenizer.encode("home").ids
    assert [x.token_id for x in window.result.steps[1 : 1 + len(ids)]] == ids


def test_teacher_forcing_panel_and_causal_switch(qtbot, window, ck):
    ref = "Is anybody home?"
    window.inputs.text.setText(TEXT)
    window.inputs.reference.setText(ref)
    do(qtbot, window, window.translate)
    r = translate(ck, TEXT, reference=ref)
    table = window.live.reference.table
    assert table.rowCount() == len(r.steps)  # a complete result starts at its end
    for i, s in enumerate(r.steps):
        assert table.item(i, 1).text() == s.token
        assert table.item(i, 2).text() == f"{math.exp(s.logprob):.4f}"
        assert table.item(i, 3).text().endswith(s.argmax)
        assert table.item(i, 4).text() == f"{s.running_loss:.3f}"
    assert f"{r.loss:.3f}" in window.live.reference.loss.text()
    do(qtbot, window, lambda: window.live.reference.causal_off.setChecked(True))
    off = translate(ck, TEXT, reference=ref, causal=False)
    assert f"{off.loss:.3f}" in window.live.reference.loss.text() and "OFF" in window.live.reference.loss.text()
    window.set_view("decoder")
    k = len(off.steps)
    np.testing.assert_allclose(window.heatmap.image.image, off.maps.decoder_self[0, 0, :k, :k].numpy(), atol=1e-6)
    assert not window.masks.decoder_self.mask.any()  # no self mask was given
    window.controls.set_position(2)  # without the mask, row t saw every key: all T columns stay
    np.testing.assert_allclose(window.heatmap.image.image, off.maps.decoder_self[0, 0, :2, :].numpy(), atol=1e-6)


def test_batch_with_shows_padding_on_both_sides(qtbot, window, ck):
    window.inputs.text.setText(LONG)
    window.live.bar.batch_with.setText("외로워.")
    do(qtbot, window, window.translate)
    expect = translate_batch(ck, [LONG, "외로워."])
    assert window.result.translation == expect[0].translation == translate(ck, LONG).translation
    window.live.bar.shown.setCurrentIndex(1)
    r = window.result
    assert r.translation == translate(ck, "외로워.").translation
    window.controls.set_position(window.controls.slider.maximum())
    skpm, tkpm = r.maps.src_key_padding_mask.numpy(), r.maps.tgt_key_padding_mask.numpy()
    assert skpm.any() and tkpm.any()
    assert window.masks.encoder.mask[0].tolist() == skpm.tolist()
    assert window.masks.tgt_padding.mask[0].tolist() == tkpm.tolist()
    window.set_view("cross")
    img = window.heatmap.image.image
    assert (img[:, skpm] == 0).all() and (img[tkpm, :] == 0).all() and img[~tkpm][:, ~skpm].sum() > 0


def test_beam_hypotheses_view_and_click_shows_their_maps(qtbot, window, ck):
    window.inputs.text.setText(TEXT)
    window.inputs.decoding.setCurrentIndex(1)
    window.inputs.beam.setValue(3)
    do(qtbot, window, window.translate)
    do(qtbot, window, lambda: click(qtbot, window.controls.step_button))
    table = window.live.beam.table
    rows = window.live.beam.rows
    assert table.rowCount() == len(rows) > 0
    for i, (_, row, _) in enumerate(rows):
        assert table.item(i, 2).text() == f"{row.logprob:.3f}" and table.item(i, 3).text() == f"{row.score:.3f}"
    i = len([r for r in rows if r[0] == "live"]) - 1
    row = rows[i][1]
    do(qtbot, window, lambda: table.cellClicked.emit(i, 1))
    assert [s.token_id for s in window.result.steps] == row.ids
    tf = teacher_forced(ck.model, window.result.source.ids, [ck.config.start_id] + row.ids[:-1], [], [])
    window.set_view("decoder")
    n = len(row.ids)
    np.testing.assert_allclose(window.heatmap.image.image, tf.maps.decoder_self[0, 0, :n, :n].numpy(), atol=1e-5)


def test_play_steps_on_the_timer_to_the_end_and_show_full_option(qtbot, window, ck):
    full = translate(ck, TEXT)
    window.inputs.text.setText(TEXT)
    do(qtbot, window, window.translate)
    window.controls.speed.setValue(20.0)
    click(qtbot, window.controls.play_button)
    qtbot.waitUntil(lambda: window.vm.state.finished and not window.controls.timer.isActive(), timeout=30000)
    assert window.result.translation == full.translation and window.vm.step == len(full.steps)
    assert [s.token_id for s in window.result.steps] == [s.token_id for s in full.steps]
    window.live.bar.show_full.setChecked(True)
    do(qtbot, window, window.translate)  # the worker computes the output once and stays at step 0
    assert window.vm.step == 0 and len(window.result.steps) == 0
    assert full.translation in window.translation_label.text()


def test_cancel_keeps_the_sentence_live(qtbot, window):
    window.inputs.text.setText(TEXT)
    do(qtbot, window, window.translate)
    window.cancel()
    do(qtbot, window, lambda: click(qtbot, window.controls.step_button))
    assert window.vm.step == 1 and len(window.result.steps) == 1
