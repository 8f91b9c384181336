"""File → Export (.npz) holds the Ablate heads and Compare tabs' views when they show a result
("Export (.npz) includes every derived view that is on screen"), checked against
independent core runs and numpy, and holds nothing of them once a tab is cleared or the main
sentence changed."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtWidgets

from core.analysis.ablation import translate_ablated
from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.translate import translate
from gui.window import view_menu as display
from tests.support.gui import TEXT, ablate, compare, compare_checkpoints, type_and_translate

OTHER = "제발 앉아."


def export(window, monkeypatch, path) -> dict[str, np.ndarray]:
    """File → Export (.npz) through the dialog, answered with ``path``; the arrays written."""
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), "*.npz"))
    with np.load(display.export_dialog(window, "npz")) as data:
        return {k: data[k] for k in data.files}


def keys(data, prefix):
    return sorted(k for k in data if k.startswith(prefix))


def test_npz_holds_the_ablation_shown(qtbot, window, tiny_checkpoint, tmp_path, monkeypatch):
    type_and_translate(qtbot, window)
    window.set_view("encoder")
    window.select(1, 2)  # layer 2, head 3: downstream of the ablated layer-1 head
    ablate(qtbot, window, "1:2,2:4", "enc")
    data = export(window, monkeypatch, tmp_path / "a.npz")
    ref = translate_ablated(load_checkpoint(tiny_checkpoint, device="cpu"), TEXT, [(1, 2), (2, 4)], "enc")
    assert str(data["ablate_kind"]) == "enc" and str(data["ablate_spec"]) == "1:2,2:4"
    np.testing.assert_array_equal(data["ablate_heads"], [[1, 2], [2, 4]])
    assert str(data["ablate_source"]) == TEXT
    assert list(data["ablate_unablated_tokens"]) == [s.token for s in ref.original.steps]
    assert list(data["ablate_ablated_tokens"]) == [s.token for s in ref.ablated.steps]
    assert float(data["ablate_unablated_logprob"]) == pytest.approx(ref.original.logprob, abs=1e-9)
    assert float(data["ablate_ablated_logprob"]) == pytest.approx(ref.ablated.logprob, abs=1e-9)
    before, after, change = data["ablate_logp_unablated"], data["ablate_logp_ablated"], data["ablate_logp_change"]
    n = len(ref.original.steps)
    assert before.shape == after.shape == change.shape == (n,)
    np.testing.assert_allclose(before, [s.logprob for s in ref.original.steps], atol=1e-9)
    assert after.sum() == pytest.approx(ref.original_output_logprob, abs=1e-6)  # core's teacher-forced total
    np.testing.assert_allclose(change, after - before, atol=1e-12)
    # the two maps shown: encoder self-attention L2 H3 of each run, with its tokens and mask
    want_a = ref.original.maps.encoder_self[1, 2].numpy().astype(np.float64)
    want_b = ref.ablated.maps.encoder_self[1, 2].numpy().astype(np.float64)
    assert np.abs(want_b - want_a).max() > 1e-4  # the ablation changed this map
    np.testing.assert_allclose(data["ablate_map_unablated"], want_a, atol=1e-7)
    np.testing.assert_allclose(data["ablate_map_ablated"], want_b, atol=1e-7)
    assert data["ablate_map_ablated_mask"].dtype == bool and not data["ablate_map_ablated_mask"].any()
    assert list(data["ablate_map_unablated_col_tokens"]) == list(ref.original.maps.src_tokens)
    assert str(data["ablate_map_ablated_title"]).endswith("L2 H3")
    assert "ablate_map_diff" not in data  # the ablation tab draws no difference map
    # another sentence translated in the main window: the old ablation is cleared, not exported
    type_and_translate(qtbot, window, OTHER)
    qtbot.waitUntil(lambda: window.analysis.ablation.report is None, timeout=5000)
    data = export(window, monkeypatch, tmp_path / "b.npz")
    assert keys(data, "ablate_") == [] and str(data["source"]) == OTHER
    assert window.analysis.ablation.maps.a.matrix.size == 0  # nor drawn
    # ablate again, then Clear: nothing of it in the file
    ablate(qtbot, window, "1:1", "enc")
    assert keys(export(window, monkeypatch, tmp_path / "c.npz"), "ablate_")  # present while shown
    window.analysis.ablation.clear_button.click()
    assert keys(export(window, monkeypatch, tmp_path / "d.npz"), "ablate_") == []


def test_npz_holds_the_comparison_shown(qtbot, window, tiny_checkpoint, second_checkpoint, tmp_path, monkeypatch):
    type_and_translate(qtbot, window)
    compare_checkpoints(qtbot, window, second_checkpoint, "encoder", 1, 3)
    c = window.analysis.compare
    data = export(window, monkeypatch, tmp_path / "a.npz")
    ra = translate(load_checkpoint(tiny_checkpoint, device="cpu"), TEXT)
    rb = translate(load_checkpoint(second_checkpoint, device="cpu"), TEXT)
    a = ra.maps.encoder_self[1, 3].numpy().astype(np.float64)
    b = rb.maps.encoder_self[1, 3].numpy().astype(np.float64)
    assert np.abs(b - a).max() > 1e-3  # two different models
    np.testing.assert_allclose(data["compare_map_a"], a, atol=1e-7)
    np.testing.assert_allclose(data["compare_map_b"], b, atol=1e-7)
    np.testing.assert_allclose(data["compare_diff"], b - a, atol=1e-7)
    assert data["compare_diff_mask"].shape == a.shape and not data["compare_diff_mask"].any()
    assert list(data["compare_map_a_row_tokens"]) == list(ra.maps.src_tokens)
    assert list(data["compare_diff_col_tokens"]) == list(ra.maps.src_tokens)
    assert list(data["compare_tokens_a"]) == [s.token for s in ra.steps]
    assert list(data["compare_tokens_b"]) == [s.token for s in rb.steps]
    assert str(data["compare_mode"]) == "checkpoints" and str(data["compare_source_b"]) == TEXT
    assert str(data["compare_reason"]).startswith("difference map") and not bool(data["compare_by_position"])
    assert str(data["compare_map_b_title"]).endswith("L2 H4")
    # two inputs of different shapes: both maps with their own tokens, no difference, the reason
    c.set_mode("inputs")
    c.text_a.setText(TEXT)
    c.text_b.setText(OTHER)
    compare(qtbot, window)
    data = export(window, monkeypatch, tmp_path / "b.npz")
    ro = translate(load_checkpoint(tiny_checkpoint, device="cpu"), OTHER)
    assert keys(data, "compare_diff") == []
    assert "shapes differ" in str(data["compare_reason"]) and str(data["compare_mode"]) == "inputs"
    np.testing.assert_allclose(data["compare_map_b"], ro.maps.encoder_self[1, 3].numpy(), atol=1e-7)
    assert list(data["compare_map_b_col_tokens"]) == list(ro.maps.src_tokens)
    assert str(data["compare_source_a"]) == TEXT and str(data["compare_source_b"]) == OTHER
    # Clear: nothing of the comparison is exported
    c.clear_button.click()
    assert keys(export(window, monkeypatch, tmp_path / "c.npz"), "compare_") == []
    # A taken from the main input (field empty), then another main sentence: cleared
    c.text_a.setText("")
    compare(qtbot, window)
    assert keys(export(window, monkeypatch, tmp_path / "d.npz"), "compare_")
    type_and_translate(qtbot, window, OTHER)
    qtbot.waitUntil(lambda: c.outcome is None, timeout=5000)
    assert keys(export(window, monkeypatch, tmp_path / "e.npz"), "compare_") == []


def test_npz_without_analysis_results_has_no_analysis_keys(qtbot, window, tmp_path, monkeypatch):
    type_and_translate(qtbot, window)
    data = export(window, monkeypatch, tmp_path / "a.npz")
    assert keys(data, "ablate_") == [] and keys(data, "compare_") == []
    assert "cross_weights" in data  # the main export is there


def test_loading_a_model_clears_both_tabs(qtbot, window, second_checkpoint, tmp_path, monkeypatch):
    type_and_translate(qtbot, window)
    ablate(qtbot, window, "1:1", "enc")
    compare_checkpoints(qtbot, window, second_checkpoint, "encoder", 0, 0)
    data = export(window, monkeypatch, tmp_path / "a.npz")
    assert keys(data, "ablate_") and keys(data, "compare_")
    info = window.model_info
    window.load_checkpoint(str(second_checkpoint), "cpu")
    qtbot.waitUntil(lambda: window.model_info != info, timeout=20000)
    qtbot.waitUntil(lambda: window.analysis.ablation.report is None and window.analysis.compare.outcome is None, timeout=5000)
    assert "model was loaded" in window.analysis.compare.status.text()
    data = export(window, monkeypatch, tmp_path / "b.npz")
    assert keys(data, "ablate_") == [] and keys(data, "compare_") == []
