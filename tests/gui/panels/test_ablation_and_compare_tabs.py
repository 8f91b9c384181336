"""The Ablate heads and Compare tabs, offscreen, driven like a user: the panels show
what core computes (checked against core's own functions and against independent runs of models
whose W^O block for a head is zeroed), and bad input leaves the last result on screen."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from PySide6 import QtCore

from core.analysis.ablation import translate_ablated
from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.translate import translate
from gui.state.compare_data import head_map
from tests.support.gui import ablate, compare, compare_checkpoints

TEXT = "집에 누군가 있어?"
OTHER = "제발 앉아."


@pytest.fixture
def window(window):
    """The shared window (tests/conftest.py) with ``TEXT`` typed in the main input."""
    window.inputs.text.setText(TEXT)
    return window


def test_ablation_hint_fits_the_state(qtbot, tiny_checkpoint):
    from gui.panels.ablation import NO_MODEL, READY, AblationPanel

    p = AblationPanel()
    qtbot.addWidget(p)
    assert p.status.text() == NO_MODEL  # before any model
    p.set_model(load_checkpoint(tiny_checkpoint, device="cpu").config)
    assert p.status.text() == READY and "load a model" not in p.status.text()


def test_ablation_panel_equals_core(qtbot, window, tiny_checkpoint):
    p = window.analysis.ablation
    assert "no model" not in p.status.text()  # the window loaded the tiny model
    assert len(p.boxes) == 2 * 4  # the grid was sized for the model: 2 encoder layers × 4 heads
    p.boxes[(2, 3)].setChecked(True)
    p.boxes[(1, 1)].setChecked(True)
    assert p.heads.text() == "1:1,2:3"
    ablate(qtbot, window, p.heads.text(), "enc")
    ck = load_checkpoint(tiny_checkpoint, device="cpu")
    ref = translate_ablated(ck, TEXT, [(1, 1), (2, 3)], "enc")
    got = p.report.result
    assert got.heads == [(1, 1), (2, 3)] and got.kind == "enc"
    for g, r in ((got.ablated, ref.ablated), (got.original, ref.original)):
        assert [s.token_id for s in g.steps] == [s.token_id for s in r.steps]
        assert [s.logprob for s in g.steps] == pytest.approx([s.logprob for s in r.steps], abs=1e-9)
        assert g.logprob == pytest.approx(r.logprob, abs=1e-9)
    # per token: the unablated output's log P under ablation sums to core's total
    assert sum(p.report.ablated_logprobs) == pytest.approx(ref.original_output_logprob, abs=1e-6)
    assert p.report.original_logprobs == pytest.approx([s.logprob for s in ref.original.steps], abs=1e-9)
    n = len(ref.original.steps)
    assert p.table.rowCount() == n + 1
    assert p.table.item(n, 4).text() == f"{ref.original_output_logprob - ref.original.logprob:+.4f}"
    assert p.table.item(0, 1).text() == ref.original.steps[0].token
    assert ref.ablated.translation in p.summary.text().replace("&#x27;", "'")
    # the top-k panels show each run's candidates at the main view's step (clamped to the run)
    k = max(1, min(window.vm.step, len(ref.ablated.steps)))
    assert p.topk_b.tokens == [t for t, _ in ref.ablated.steps[k - 1].top_k]
    # the ablation ran on the analysis thread (not the GUI's, not the model worker's) on its own
    # copy of the model, and left the app's model unablated
    assert window.analysis.worker.thread() is window.analysis.thread
    assert window.analysis.thread not in (window.thread, QtCore.QThread.currentThread())
    assert all(not m.ablated_heads for m in window.worker.checkpoint.model.modules() if hasattr(m, "ablated_heads"))


def zeroed(ck, kind, layer, head):
    """An independent model: a deep copy with head ``head``'s input block of W^O set to 0."""
    ck2 = copy.copy(ck)
    ck2.model = m = copy.deepcopy(ck.model)
    blk = (m.encoder_layers if kind == "enc" else m.decoder_layers)[layer]
    mha = blk.cross_attn if kind == "cross" else blk.self_attn
    d = mha.d_head
    with torch.no_grad():
        mha.w_o.weight[:, head * d : (head + 1) * d] = 0.0  # nn.Linear stores W^O transposed
    return ck2


@pytest.mark.parametrize("kind,view", [("dec", "decoder"), ("enc", "cross")])
def test_gui_ablated_map_equals_model_with_zeroed_w_o(qtbot, window, tiny_checkpoint, kind, view):
    window.set_view(view)
    window.select(1, 2)  # layer 2, head 3: downstream of the ablated layer-1 head
    ablate(qtbot, window, "1:2", kind)
    p = window.analysis.ablation
    ck = load_checkpoint(tiny_checkpoint, device="cpu")
    expected = head_map(translate(zeroed(ck, kind, 0, 1), TEXT), view, 1, 2)
    plain = head_map(translate(ck, TEXT), view, 1, 2)
    drawn_b, drawn_a = p.maps.b.image.image, p.maps.a.image.image
    assert drawn_b.shape == expected.weights.shape
    np.testing.assert_allclose(drawn_b, expected.weights, atol=1e-6)
    np.testing.assert_allclose(drawn_a, plain.weights, atol=1e-6)
    assert np.abs(expected.weights - plain.weights).max() > 1e-4  # the ablation changed this map
    assert p.maps.b.row_tokens == expected.row_tokens and p.maps.b.col_tokens == expected.col_tokens


def test_compare_two_checkpoints_difference_is_b_minus_a(qtbot, window, tiny_checkpoint, second_checkpoint):
    compare_checkpoints(qtbot, window, second_checkpoint, "encoder", 1, 3)
    c = window.analysis.compare
    a = translate(load_checkpoint(tiny_checkpoint, device="cpu"), TEXT).maps.encoder_self[1, 3].numpy()
    b = translate(load_checkpoint(second_checkpoint, device="cpu"), TEXT).maps.encoder_self[1, 3].numpy()
    want = b.astype(np.float64) - a.astype(np.float64)
    assert np.abs(want).max() > 1e-3  # two different models
    assert c.comparison is not None and c.comparison.diff is not None
    np.testing.assert_allclose(c.comparison.diff, want, atol=1e-7)
    np.testing.assert_allclose(c.maps.diff.image.image, want, atol=1e-6)  # what is drawn
    m = np.abs(want).max()
    assert c.maps.diff.levels == pytest.approx((-m, m), rel=1e-6)  # centred at 0
    i, j = np.unravel_index(np.argmax(np.abs(want)), want.shape)
    assert c.maps.diff.describe(i, j).endswith(f"{want[i, j]:.4f}")  # hover value
    assert c.maps.reason.text().startswith("difference map")
    # a different head selected in the grid redraws the difference of that head
    window.grid.clicked.emit((0, 0))  # as a click on thumbnail L1 H1
    qtbot.waitUntil(lambda: c.comparison.a.title.endswith("L1 H1"), timeout=5000)
    a0 = translate(load_checkpoint(tiny_checkpoint, device="cpu"), TEXT).maps.encoder_self[0, 0].numpy()
    b0 = translate(load_checkpoint(second_checkpoint, device="cpu"), TEXT).maps.encoder_self[0, 0].numpy()
    np.testing.assert_allclose(c.comparison.diff, b0.astype(np.float64) - a0, atol=1e-7)
    # then two inputs of different shapes: the old difference image is gone, not left under the reason
    c.set_mode("inputs")
    c.text_a.setText(TEXT)
    c.text_b.setText(OTHER)
    compare(qtbot, window)
    assert c.comparison.diff is None and c.maps.diff.matrix.size == 0
    assert c.maps.diff.image.image is None and c.maps.diff.values.shown() == []


def test_compare_two_inputs_of_different_shape_draws_no_difference(qtbot, window, tiny_checkpoint):
    window.set_view("encoder")
    window.select(0, 1)
    c = window.analysis.compare
    c.set_mode("inputs")
    c.text_a.setText(TEXT)
    c.text_b.setText(OTHER)
    compare(qtbot, window)
    ck = load_checkpoint(tiny_checkpoint, device="cpu")
    ra, rb = translate(ck, TEXT), translate(ck, OTHER)
    assert len(ra.maps.src_tokens) != len(rb.maps.src_tokens)  # the case under test
    assert c.comparison.diff is None
    assert "shapes differ" in c.maps.reason.text()
    assert c.maps.diff.matrix.size == 0  # no difference image at all
    # both maps with their own token labels, each equal to its own run
    assert c.maps.a.col_tokens == ra.maps.src_tokens and c.maps.b.col_tokens == rb.maps.src_tokens
    np.testing.assert_allclose(c.maps.b.image.image, rb.maps.encoder_self[0, 1].numpy(), atol=1e-7)
    # aligned: both views span the larger map, so cell i of A sits beside cell i of B
    n = max(len(ra.maps.src_tokens), len(rb.maps.src_tokens))
    for hm in (c.maps.a, c.maps.b):
        assert hm.view.viewRange()[0] == pytest.approx([0, n], abs=1e-6)


def test_bad_input_keeps_the_last_result(qtbot, window, tmp_path):
    p = window.analysis.ablation
    ablate(qtbot, window, "1:1", "enc")
    good = p.report
    assert good is not None
    ticked = {k for k, b in p.boxes.items() if b.isChecked()}
    assert ticked == {(1, 1)}
    ablate(qtbot, window, "3:1", "cross")  # the model has 2 decoder layers
    status = p.status.text()
    assert status.startswith("⚠ heads 3:1: layer 3 out of range 1..2 (cross)"), status
    assert "--ablate" not in status and "heads 1:1" in status
    assert p.report is good
    # the kind and ticks are those of the result still shown, not of the failed request
    assert p.core_kind == "enc" and p.heads.text() == "1:1"
    assert {k for k, b in p.boxes.items() if b.isChecked()} == ticked
    ablate(qtbot, window, "", "enc")
    assert "tick at least one head" in p.status.text() and "--ablate" not in p.status.text()
    window.inputs.text.setText("   ")
    ablate(qtbot, window, "1:1", "enc")
    assert "empty" in p.status.text() and p.report is good
    window.inputs.text.setText(TEXT)
    ablate(qtbot, window, "1:x", "enc")
    assert "layer:head" in p.status.text() and p.report is good
    c = window.analysis.compare
    c.set_mode("inputs")
    c.text_b.setText(OTHER)
    compare(qtbot, window)
    last = c.outcome
    assert last is not None
    (tmp_path / "broken").mkdir()
    c.set_mode("checkpoints")
    c.path_b.setText(str(tmp_path / "broken"))
    compare(qtbot, window)
    assert "checkpoint B could not be loaded" in c.status.text() and c.outcome is last
    c.set_mode("inputs")
    c.text_b.setText("")
    compare(qtbot, window)
    assert "empty" in c.status.text() and c.outcome is last
    assert window.isVisible() and window.analysis.worker.second is None  # the app is up, no B kept


def test_compare_maps_rules():
    """Qt-free: B − A only with the same shape and tokens; masked cells (either run) are 0 and flagged."""
    from gui.state.compare_data import HeadMap, compare_maps, position_labels

    rng = np.random.default_rng(0)
    wa, wb = rng.random((3, 4)), rng.random((3, 4))
    ma = np.zeros((3, 4), bool)
    mb = ma.copy()
    mb[0, 3] = True
    a = HeadMap(wa, ma, ["x", "y", "z"], list("abcd"), "q", "k", "A")
    b = HeadMap(wb, mb, ["x", "y", "z"], list("abcd"), "q", "k", "B")
    c = compare_maps(a, b)
    want = wb - wa
    want[0, 3] = 0.0
    np.testing.assert_array_equal(c.diff, want)
    assert c.diff_mask[0, 3] and c.diff_mask.sum() == 1 and c.reason == ""
    other = HeadMap(wb, mb, ["x", "w", "z"], list("abcd"), "q", "k", "B")  # same shape, query 2 differs
    c2 = compare_maps(a, other)
    assert c2.diff is None and "query 2 differs" in c2.reason
    c3 = compare_maps(a, other, by_position=True)  # opt-in: subtract by position, say so
    np.testing.assert_array_equal(c3.diff, want)
    assert "1 token label(s) differ" in c3.reason
    assert position_labels(a.row_tokens, other.row_tokens) == ["x", "y|w", "z"]
    shorter = HeadMap(wb[:2], mb[:2], ["x", "y"], list("abcd"), "q", "k", "B")
    assert compare_maps(a, shorter, by_position=True).diff is None  # never across shapes


def test_panel_opens_in_its_own_window_and_returns(qtbot, window):
    p = window.analysis.compare
    tabs = window.live.tabs
    n = tabs.count()
    p.toggle_window()
    assert p.isWindow() and tabs.indexOf(p) == -1 and tabs.count() == n - 1
    p.close()
    assert not p.isWindow() and tabs.indexOf(p) >= 0 and tabs.count() == n


def test_panels_return_to_their_own_place_in_the_tab_strip(qtbot, window):
    tabs = window.live.tabs
    for name in window.slots.names():  # every tab built (a tab shown on the way would build its panel)
        window.panel(name)
    a, c = window.analysis.ablation, window.analysis.compare
    order = [tabs.widget(k) for k in range(tabs.count())]
    assert order.index(a) < len(order) - 1  # not already last, so "back at the end" would fail
    a.detach_button.click()
    assert a.isWindow() and tabs.indexOf(a) == -1
    a.detach_button.click()  # "Back into the tab"
    assert [tabs.widget(k) for k in range(tabs.count())] == order and tabs.currentWidget() is a
    for first, second in ((a, c), (c, a)):  # both out, back in either order
        a.toggle_window()
        c.toggle_window()
        assert tabs.count() == len(order) - 2
        first.close()
        second.close()
        assert [tabs.widget(k) for k in range(tabs.count())] == order


def test_colour_map_and_scale_restyle_the_tab_maps(qtbot, window, second_checkpoint):
    import pyqtgraph as pg

    from gui.panels.pair_views import DIVERGING
    from gui.window import view_menu as display

    ablate(qtbot, window, "1:1", "enc")
    compare_checkpoints(qtbot, window, second_checkpoint, "encoder", 1, 3)
    c, p = window.analysis.compare, window.analysis.ablation
    window.set_colormap("cividis")
    lut = pg.colormap.get("cividis").getLookupTable(nPts=256)
    for m in (c.maps.a, c.maps.b, p.maps.a, p.maps.b):
        np.testing.assert_array_equal(np.asarray(m.image.lut), lut)
    np.testing.assert_array_equal(np.asarray(c.maps.diff.image.lut), DIVERGING.lookup_table(256))
    diff_levels = c.maps.diff.levels
    display.set_scale(window, "per-map")
    for m, hm in ((c.maps.a, c.comparison.a), (c.maps.b, c.comparison.b)):
        open_cells = hm.weights[~hm.mask]
        assert m.levels == pytest.approx((open_cells.min(), open_cells.max()), abs=1e-9)
        assert m.view.viewRange()[0] == pytest.approx([0, hm.weights.shape[1]], abs=1e-6)
    assert c.maps.diff.levels == diff_levels  # B − A keeps ±max |B − A|
    shown = p.maps.a.matrix[~p.maps.a.mask]  # the ablation tab's unablated map too
    assert p.maps.a.levels == pytest.approx((shown.min(), shown.max()), abs=1e-9)
    display.set_scale(window, "fixed")
    assert c.maps.a.levels == (0.0, 1.0) and p.maps.b.levels == (0.0, 1.0)
