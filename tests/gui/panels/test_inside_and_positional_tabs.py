"""The "Inside one step" and "Positional encoding" tabs, offscreen on a tiny model.

Every check compares the arrays the widgets display: the softmax row with the enlarged heatmap's
row (exactly), the scores with q·k/√d_k and the output with weights @ V computed here in numpy
from the displayed q, K and V, the "−∞" cells with the mask the app says was applied, and the
positional matrix with ``positional_matrix`` and an independent numpy sinusoid (§3.5).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
import pytest
import torch
from PySide6 import QtCore

from core.analysis.inside import positional_matrix
from core.checkpoints.checkpoint import load_checkpoint, save_checkpoint
from core.transformer.model import Transformer
from gui.panels.inside import HINT
from gui.state.view_data import masks_at
from gui.widgets.colormap import Colormap
from gui.widgets.strips import NEG_INF, ValueStrip, value_text
from tests.support import tiny_config
from tests.support.gui import do, open_window, type_and_translate

KIND = {"encoder": "enc", "decoder": "dec", "cross": "cross"}


def inside_of(qtbot, win, kind, layer, head, query):
    """Select the head and the query as a user does and wait until the panel shows that step."""
    panel = win.inside_panel
    win.live.tabs.setCurrentWidget(panel)
    win.set_view(kind)
    win.select(layer - 1, head - 1)
    qtbot.waitUntil(lambda: panel.query.maximum() >= query, timeout=5000)
    panel.query.setValue(query)
    want = (KIND[kind], layer, head, query)
    qtbot.waitUntil(
        lambda: panel.step is not None and (panel.step.kind, panel.step.layer, panel.step.head, panel.step.query) == want,
        timeout=20000,
    )
    return panel


@pytest.mark.parametrize(
    "kind, layer, head, query", [("encoder", 2, 3, 2), ("decoder", 1, 2, 3), ("cross", 2, 4, 3), ("cross", 1, 1, 1)]
)
def test_inside_tab_equals_heatmap_row_and_numpy(qtbot, window, kind, layer, head, query):
    window.inputs.pad_to.setValue(12)  # padded source keys: the encoder and cross masks are not empty
    result = type_and_translate(qtbot, window)
    do(qtbot, window, lambda: window.controls.set_position(3))  # live: three decoder steps, three queries
    panel = inside_of(qtbot, window, kind, layer, head, query)
    q_strip, k_strip, s_strip, m_strip, w_strip, v_strip, o_strip = panel.strips
    weights = w_strip.matrix[0]
    heat_row = window.heatmap.matrix[query - 1]
    n = weights.size
    assert np.array_equal(weights, heat_row[:n]) and not heat_row[n:].any()  # exactly the heatmap's row
    assert np.array_equal(weights, panel.heatmap_row[:n])
    q, K, V = q_strip.matrix[0].astype(np.float64), k_strip.matrix.astype(np.float64), v_strip.matrix.astype(np.float64)
    d_head = window.worker.checkpoint.config.d_model // window.worker.checkpoint.config.n_heads
    assert q.shape == (d_head,) and K.shape == (n, d_head) and V.shape == (n, d_head)
    assert np.allclose(s_strip.matrix[0], K @ q / math.sqrt(d_head), atol=1e-5)
    masks = masks_at(window.result, window.vm.step)
    applied = {"encoder": masks["encoder"], "cross": masks["cross"][query - 1], "decoder": np.zeros(n, bool)}[kind][
        :n
    ]  # cached decoding: no self mask is given
    neg = np.array([m_strip.cell_texts.get((0, c)) == NEG_INF for c in range(n)])
    assert np.array_equal(neg, applied) and (kind == "decoder" or applied.any())
    assert np.isneginf(m_strip.matrix[0][applied]).all()
    assert np.array_equal(m_strip.matrix[0][~applied], s_strip.matrix[0][~applied])
    assert (weights[applied] == 0).all()
    e = np.exp(np.where(applied, -np.inf, s_strip.matrix[0]) - s_strip.matrix[0][~applied].max())
    assert np.allclose(weights, e / e.sum(), atol=1e-6)
    assert np.allclose(o_strip.matrix[0], weights.astype(np.float64) @ V, atol=1e-5)
    assert all(np.isfinite(s.image.image.image).all() for s in panel.strips)  # −∞ / NaN never drawn
    assert d_head <= 16 and [q_strip.cell_texts[(0, c)] for c in range(d_head)] == [value_text(x) for x in q]
    assert [w_strip.cell_texts[(0, c)] for c in range(n)] == [value_text(x) for x in weights]  # numbers printed
    for i, strip in enumerate(panel.strips):  # the title's colour range: the real ends, 3 significant digits
        finite = strip.matrix[np.isfinite(strip.matrix)].astype(np.float64)
        top = 1.0 if i == 4 else float(np.abs(finite).max())
        lo, hi = (0.0, 1.0) if i == 4 else (-top, top)
        want = f"(colour {lo:.3g} … {hi:.3g})".replace("-", "−")
        assert want in strip.plot.titleLabel.text, (i, strip.plot.titleLabel.text)
    if kind == "decoder":
        assert n == query and panel.step.key_tokens == result.maps.tgt_tokens[:n]
    tokens = result.maps.src_tokens if kind != "decoder" else result.maps.tgt_tokens
    assert [t for _, t in s_strip.plot.getAxis("bottom")._tickLevels[0]] == list(tokens[:n])
    assert [t for _, t in m_strip.plot.getAxis("bottom")._tickLevels[0]] == list(tokens[:n])


def test_inside_strip_title_range_keeps_small_values(qtbot):
    """A range of ±0.00412 reads "−0.00412 … 0.00412" (two decimals read "−0.00 … 0.00")."""
    layout = pg.GraphicsLayoutWidget()
    qtbot.addWidget(layout)
    strip = ValueStrip(layout.ci, 0, Colormap.named("viridis"), diverging=True)
    for m, want in ((0.00412, "−0.00412 … 0.00412"), (2.71828, "−2.72 … 2.72"), (1234.5, "−1.23e+03 … 1.23e+03")):
        strip.set(np.array([[m, -m / 2, 0.0]]), ["q"], list("abc"), "scores")
        assert strip.levels == (-m, m) and f"(colour {want})" in strip.plot.titleLabel.text
    strip.set(np.array([[0.25, 0.75]]), ["q"], list("ab"), "softmax", levels=(0.0, 1.0))
    assert "(colour 0 … 1)" in strip.plot.titleLabel.text


def test_inside_tab_click_and_messages(qtbot, window):
    panel = window.inside_panel
    window.live.tabs.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: panel.message.text() == HINT, timeout=3000)  # nothing translated yet
    assert panel.step is None and not panel.plots.isVisible()
    type_and_translate(qtbot, window)
    window.set_view("encoder")
    window.select(0, 1)
    hm = window.heatmap
    scene = hm.view.mapViewToScene(QtCore.QPointF(0.5, 2.5))  # a click on heatmap row 3
    qtbot.mouseClick(hm.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=hm.mapFromScene(scene))
    qtbot.waitUntil(lambda: panel.step is not None and panel.step.query == 3 and panel.step.kind == "enc", timeout=20000)
    assert np.array_equal(panel.strips[4].matrix[0], hm.matrix[2])
    window.set_view("masks")
    qtbot.waitUntil(lambda: panel.step is None and "masks view" in panel.message.text(), timeout=3000)
    window.set_view("cross")
    do(qtbot, window, lambda: window.controls.set_position(0))
    qtbot.waitUntil(lambda: panel.step is None and "No decoder step yet" in panel.message.text(), timeout=3000)
    window.inputs.reference.setText("Is anyone home?")  # teacher forcing is not replayed
    do(qtbot, window, window.translate)
    qtbot.waitUntil(lambda: panel.step is None and "teacher forcing" in panel.message.text(), timeout=3000)
    assert not panel.plots.isVisible()


def sinusoid(n: int, d: int) -> np.ndarray:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(…) (§3.5), in float64."""
    pos, i = np.arange(n)[:, None], np.arange(d // 2)[None, :]
    pe = np.zeros((n, d))
    pe[:, 0::2] = np.sin(pos / 10000 ** (2 * i / d))
    pe[:, 1::2] = np.cos(pos / 10000 ** (2 * i / d))
    return pe


def test_positional_tab_is_the_models_sinusoid(qtbot, window, tiny_checkpoint):
    panel = window.positional_panel
    window.live.tabs.setCurrentWidget(panel)
    result = type_and_translate(qtbot, window)
    src = list(result.maps.src_tokens)
    qtbot.waitUntil(lambda: panel.tokens == src, timeout=5000)
    model = load_checkpoint(tiny_checkpoint, device="cpu").model
    n = panel.matrix.shape[0]
    assert n == len(src) + 8
    assert np.array_equal(panel.matrix, positional_matrix(model, "src", n).numpy())
    assert np.allclose(panel.matrix, sinusoid(n, model.config.d_model), atol=1e-5)
    left = panel.plot.getAxis("left")._tickLevels[0]
    assert left == [(i + 0.5, f"{i} ⟨{t}⟩") for i, t in enumerate(src)]
    assert panel.band.getRegion() == (0, len(src)) and panel.band.isVisible()
    panel.side.setCurrentIndex(1)  # the decoder's table, with the decoder inputs at this step
    tgt = list(result.maps.truncated(window.vm.step).tgt_tokens)
    qtbot.waitUntil(lambda: panel.tokens == tgt, timeout=5000)
    assert np.array_equal(panel.matrix, positional_matrix(model, "tgt", len(tgt) + 8).numpy())
    panel.all_rows.setChecked(True)
    qtbot.waitUntil(lambda: panel.matrix.shape[0] == model.config.max_len, timeout=5000)
    assert np.allclose(panel.matrix, sinusoid(model.config.max_len, model.config.d_model), atol=1e-5)
    assert np.isfinite(panel.image.image.image).all()


def test_positional_tab_learned_table(qtbot, tmp_path, tiny_tokenizers):
    src_tok, tgt_tok = tiny_tokenizers
    torch.manual_seed(3)
    model = Transformer(
        tiny_config(src_vocab_size=src_tok.vocab_size, tgt_vocab_size=tgt_tok.vocab_size, positional="learned")
    ).eval()
    path = save_checkpoint(tmp_path / "learned", model, src_tok, tgt_tok)
    win = open_window(qtbot, path)
    try:
        panel = win.positional_panel
        win.live.tabs.setCurrentWidget(panel)
        qtbot.waitUntil(lambda: panel.matrix.size > 0, timeout=5000)
        assert "No sentence yet" in panel.message.text() and panel.tokens == []
        assert np.array_equal(panel.matrix, model.src_pos.table.weight[: 1 + 8].detach().numpy())
        assert "learned" in panel.plot.titleLabel.text
    finally:
        win.close()


def test_npz_export_holds_the_inside_step_and_positional_matrix(qtbot, window, tmp_path, monkeypatch):
    from PySide6 import QtWidgets

    from gui.window import view_menu as display

    window.inputs.pad_to.setValue(12)
    type_and_translate(qtbot, window)
    panel = inside_of(qtbot, window, "encoder", 1, 2, 2)
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a: (str(tmp_path / "x"), "*.npz"))
    data = np.load(display.export_dialog(window, "npz"))
    for i, name in enumerate(("q", "k", "scores", "masked_scores", "weights", "v", "output")):
        shown = panel.strips[i].matrix
        np.testing.assert_array_equal(data[f"inside_{name}"], shown if name in ("k", "v") else shown[0])
    np.testing.assert_array_equal(data["inside_mask"], window.result.maps.applied.encoder[0].numpy())
    assert bool(data["inside_mask_given"]) and data["inside_mask"].any()
    assert data["inside_what"].tolist() == ["enc", "1", "2", "2", window.result.maps.src_tokens[1]]
    assert list(data["inside_key_tokens"]) == window.result.maps.src_tokens
    pos = window.positional_panel
    np.testing.assert_array_equal(data["positional_matrix"], pos.matrix)
    assert list(data["positional_tokens"]) == pos.tokens == window.result.maps.src_tokens
    window.live.tabs.setCurrentIndex(0)  # the inside tab hidden: it still shows layer 1 head 2 …
    window.select(1, 0)  # … so after another head is chosen it exports nothing stale
    assert panel.step is not None and panel.npz_extra() == {}
