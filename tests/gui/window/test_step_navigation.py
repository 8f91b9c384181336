"""Stepping through a translation in the app, offscreen, driven like a user: the maps drawn
at each step equal an independent run of the decoding engine, and Back and the keys grow and shrink
the decoder rows."""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore

from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.session import DecodeSession
from core.transformer.masks import causal_mask
from tests.support.gui import TEXT, do, type_and_translate


def reference_session(tiny_checkpoint, text=TEXT):
    ck = load_checkpoint(tiny_checkpoint, device="cpu")
    s = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, text)
    s.run()
    return s


def ticks(axis):
    return [label for _, label in axis._tickLevels[0]]


def test_heatmaps_equal_model_attention_while_stepping(qtbot, window, tiny_checkpoint):
    result = type_and_translate(qtbot, window)
    ref = reference_session(tiny_checkpoint)
    maps = ref.maps()
    assert window.inputs.text.text() == TEXT
    assert result.translation == ref.translation
    do(qtbot, window, lambda: window.controls.set_position(0))
    for _ in range(3):
        do(qtbot, window, lambda: qtbot.mouseClick(window.controls.step_button, QtCore.Qt.MouseButton.LeftButton))
    k = 3
    assert window.controls.position == k
    s = len(ref.source.ids)
    assert s != k  # the cross-attention map below is not square

    window.set_view("cross")
    window.select(1, 2)
    img = window.heatmap.image.image
    assert img.shape == (k, s)  # T rows (queries) × S columns (keys): not transposed
    np.testing.assert_allclose(img, maps.cross[1, 2, :k].numpy(), atol=1e-6)
    assert ticks(window.heatmap.plot.getAxis("left")) == maps.tgt_tokens[:k]
    assert ticks(window.heatmap.plot.getAxis("bottom")) == ref.source.tokens
    grid_img = window.grid.images[1 * 4 + 2].image.image  # layer 2, head 3 thumbnail
    np.testing.assert_allclose(grid_img, maps.cross[1, 2, :k].numpy(), atol=1e-6)

    window.set_view("decoder")
    img = window.heatmap.image.image
    np.testing.assert_allclose(img, maps.decoder_self[1, 2, :k, :k].numpy(), atol=1e-6)
    assert (img[np.triu_indices(k, 1)] == 0).all()
    # cached decoding: the model was given no self mask; key j did not exist yet for query t < j
    assert not window.masks.decoder_self.mask.any()
    assert window.masks.decoder_self.present.tolist() == (~causal_mask(k)).tolist()
    assert window.masks.encoder.mask.tolist() == [[False] * s]
    assert len(window.grid.images) == 2 * 4 + 2  # every layer × head, then one derived mean per layer

    window.set_view("encoder")
    np.testing.assert_allclose(window.heatmap.image.image, maps.encoder_self[1, 2].numpy(), atol=1e-6)
    assert window.heatmap.describe(0, 1).startswith(f"query 1 ⟨{ref.source.tokens[0]}⟩ → key 2")


def test_back_and_keyboard_grow_and_shrink_decoder_rows(qtbot, window):
    type_and_translate(qtbot, window)
    window.set_view("decoder")
    do(qtbot, window, lambda: qtbot.keyClick(window, QtCore.Qt.Key.Key_Home))
    assert window.controls.position == 0
    assert "no decoder step yet" in window.heatmap.plot.titleLabel.text
    do(qtbot, window, lambda: qtbot.keyClick(window, QtCore.Qt.Key.Key_Right))
    do(qtbot, window, lambda: qtbot.keyClick(window, QtCore.Qt.Key.Key_Right))
    assert window.heatmap.image.image.shape == (2, 2)
    do(qtbot, window, lambda: qtbot.keyClick(window, QtCore.Qt.Key.Key_Left))
    assert window.heatmap.image.image.shape == (1, 1)
    do(qtbot, window, lambda: qtbot.keyClick(window, QtCore.Qt.Key.Key_End))
    assert window.controls.position == len(window.result.steps)
