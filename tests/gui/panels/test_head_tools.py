"""Head tools in the app (summaries): derived grid cells (mean over heads, rollout),
the sortable head table, the alignment lines and the derived views in the .npz export, each
checked against an independent numpy computation from the exported tensors."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch
from PySide6 import QtCore

from core.analysis import head_stats
from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.translate import translate
from core.transformer.maps import AttentionMaps
from gui.export.files import export_npz
from gui.widgets.colormap import Colormap
from gui.window.main_window import MainWindow
from tests.support.gui import do, type_and_translate

TEXT = "집에 누군가 있어?"


# ---------- independent numpy versions ----------
def np_rollout(enc: np.ndarray) -> np.ndarray:
    s = enc.shape[-1]
    out = np.eye(s)
    for layer in enc.astype(np.float64):
        a = layer.mean(0) + np.eye(s)
        out = (a / a.sum(-1, keepdims=True)) @ out
    return out


def np_entropy(w: np.ndarray, visible: np.ndarray, valid: np.ndarray) -> np.ndarray:
    rows = np.nonzero(valid & visible.any(-1))[0]
    out = np.zeros(w.shape[:2])
    for li in range(w.shape[0]):
        for hi in range(w.shape[1]):
            es = []
            for i in rows:
                p = w[li, hi, i][visible[i]].astype(np.float64)
                p = p[p > 0]
                es.append(-(p * np.log(p)).sum())
            out[li, hi] = np.mean(es) if es else 0.0
    return out


def np_labels(w: np.ndarray, visible: np.ndarray, valid: np.ndarray, sink_cols: np.ndarray) -> list[str]:
    """The documented rule (README / head_stats thresholds), written again with plain numpy."""
    rows = np.nonzero(valid & visible.any(-1))[0]
    w = w.astype(np.float64) * visible
    max_ent = np.mean([np.log(visible[i].sum()) for i in rows])
    ent = np_entropy(w, visible, valid)
    out = []
    for li in range(w.shape[0]):
        for hi in range(w.shape[1]):
            m = w[li, hi]
            masses = {
                n: np.mean([m[i, i + d] if 0 <= i + d < m.shape[1] else 0.0 for i in rows])
                for n, d in (("previous", -1), ("same", 0), ("next", 1))
            }
            masses["sink"] = np.mean([m[i, sink_cols].sum() for i in rows])
            best = max(masses, key=masses.get)
            am = np.array([int(np.argmax(m[i])) for i in rows])
            share = np.mean(am[1:] >= am[:-1])
            if masses[best] >= head_stats.POSITION_THRESHOLD:
                out.append(best)
            elif share >= head_stats.MONOTONE_THRESHOLD and len(set(am)) >= max(
                head_stats.MONOTONE_MIN_DISTINCT, math.ceil(len(rows) / 2)
            ):
                out.append("monotone")
            elif ent[li, hi] >= head_stats.BROAD_THRESHOLD * max_ent:
                out.append("broad")
            else:
                out.append("mixed")
    return out


# ---------- the window ----------
def click_cell(qtbot, win, key):
    """A real mouse click in the middle of the grid cell ``key``."""
    view = win.grid.views[win.grid.keys.index(key)]
    pos = win.grid.mapFromScene(view.sceneBoundingRect().center())
    qtbot.mouseClick(win.grid.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=pos)


def test_derived_cells_are_labelled_and_open_like_heads(qtbot, window):
    result = type_and_translate(qtbot, window)
    maps = result.maps
    window.set_view("encoder")
    titles = [c.title for c in window.grid.cells]
    assert titles[-3:] == ["L1 mean (derived)", "L2 mean (derived)", "rollout (derived)"]
    assert titles[:8] == [f"L{li} H{hi}" for li in (1, 2) for hi in (1, 2, 3, 4)]  # heads unchanged, first
    enc = maps.encoder_self.numpy()
    np.testing.assert_allclose(window.grid.images[8].image.image, enc[0].mean(0), atol=1e-6)
    click_cell(qtbot, window, ("mean", 1))
    assert window.vm.derived == ("mean", 1)
    np.testing.assert_allclose(window.heatmap.image.image, enc[1].mean(0), atol=1e-6)
    assert "mean over heads (derived)" in window.heatmap.plot.titleLabel.text
    assert window.heatmap.describe(0, 1).endswith(f"{enc[1].mean(0)[0, 1]:.4f}")  # hover read-out
    click_cell(qtbot, window, ("rollout", 0))
    np.testing.assert_allclose(window.heatmap.image.image, np_rollout(enc), atol=1e-5)
    assert "rollout" in window.heatmap.plot.titleLabel.text and "(derived)" in window.heatmap.plot.titleLabel.text
    window.set_view("cross")  # no rollout outside the encoder: back to the selected head
    assert window.vm.derived is None and [c.title for c in window.grid.cells][-1] == "L2 mean (derived)"
    k = window.vm.step
    np.testing.assert_allclose(window.heatmap.image.image, maps.cross[1, window.selected[1], :k].numpy(), atol=1e-6)
    click_cell(qtbot, window, (0, 2))  # a head again
    assert window.vm.derived is None and window.selected == (0, 2)


def test_head_table_sorts_and_opens_a_head(qtbot, window):
    result = type_and_translate(qtbot, window)
    window.set_view("encoder")
    window.live.tabs.setCurrentWidget(window.heads.table_panel)
    table = window.heads.table
    assert table.rowCount() == 2 * 4
    col = table.HEADERS.index("entropy (nats)")
    header = table.horizontalHeader()
    for _ in range(2):  # a header click sorts by entropy; a second click reverses the order
        before = header.sortIndicatorOrder()
        qtbot.mouseClick(
            header.viewport(),
            QtCore.Qt.MouseButton.LeftButton,
            pos=QtCore.QPoint(header.sectionViewportPosition(col) + 5, header.height() // 2),
        )
        assert header.sortIndicatorSection() == col and header.sortIndicatorOrder() != before
        ent = table.column("entropy (nats)")
        assert ent == sorted(ent, reverse=header.sortIndicatorOrder() == QtCore.Qt.SortOrder.DescendingOrder)
    assert len(set(ent)) > 1
    s = result.maps.src_key_padding_mask.numpy()
    expected = np_entropy(result.maps.encoder_self.numpy(), ~np.broadcast_to(s, (len(s), len(s))), ~s)
    for i in range(table.rowCount()):
        layer, head = table.head_at(i)
        assert ent[i] == pytest.approx(expected[layer, head], abs=1e-5)
    row = 5
    rect = table.visualItemRect(table.item(row, col))
    qtbot.mouseClick(table.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=rect.center())
    layer, head = table.head_at(row)
    assert window.selected == (layer, head) and window.vm.derived is None
    np.testing.assert_allclose(window.heatmap.image.image, result.maps.encoder_self[layer, head].numpy(), atol=1e-6)
    assert table.selectionModel().isRowSelected(row, QtCore.QModelIndex())
    qtbot.keyClick(table, QtCore.Qt.Key.Key_Down)  # the keyboard walks the table, opening each head
    assert window.selected == table.head_at(row + 1)
    window.set_view("decoder")  # the table follows the view; the causal mask makes "next" impossible
    assert table.rowCount() == 2 * 4
    nxt = table.HEADERS.index("next")
    assert {table.item(i, nxt).text() for i in range(8)} == {"impossible"} and not table.isColumnHidden(nxt)
    assert "causal mask" in window.heads.table_panel.caption.text()


def test_alignment_line_alphas_are_the_weights(qtbot, window):
    window.inputs.pad_to.setValue(12)  # padding keys and queries: no lines
    result = type_and_translate(qtbot, window)
    window.heads.map_tabs.setCurrentWidget(window.heads.align)
    lines = window.heads.lines
    window.set_view("cross")
    window.select(1, 3)
    k = window.vm.step
    w = result.maps.cross[1, 3, :k].numpy()
    pad = result.maps.src_key_padding_mask.numpy()
    assert pad.any()
    lines.repaint()
    drawn = {(r, c): a for r, c, a in lines.painted}
    expected = {(r, c): w[r, c] for r in range(k) for c in range(w.shape[1]) if not pad[c] and w[r, c] > 0}
    assert drawn.keys() == expected.keys()  # every visible key, no pad key
    for rc, a in drawn.items():
        assert a == pytest.approx(expected[rc], abs=1 / 65535)  # QColor keeps alpha in 16 bits
    lines.set_focus(1)  # one query row: its lines only, alphas = the heatmap's row
    lines.repaint()
    assert [c for r, c, _ in lines.painted] == [c for c in range(w.shape[1]) if not pad[c] and w[1, c] > 0]
    np.testing.assert_allclose([a for *_, a in lines.painted], window.heatmap.image.image[1][~pad], atol=1 / 65535)
    lines.set_focus(None)
    window.heads.align.mean.setChecked(True)  # the layer mean instead of the head
    np.testing.assert_allclose(lines.matrix, result.maps.cross[1, :, :k].numpy().mean(0), atol=1e-6)
    window.set_view("encoder")
    lines.repaint()
    assert all(not pad[r] and not pad[c] for r, c, _ in lines.painted) and lines.painted
    assert lines.row_label == "source query" and lines.col_label == "source key"


def test_npz_derived_views_equal_numpy(qtbot, window, tmp_path):
    window.inputs.pad_to.setValue(12)
    result = type_and_translate(qtbot, window)
    do(qtbot, window, lambda: window.controls.set_position(3))
    window.set_view("decoder")
    window.select(1, 2)
    window.heads.align.mean.setChecked(True)
    k = window.vm.step
    data = np.load(export_npz(tmp_path / "d.npz", result, k, window.kind, window.selected, window.heads.npz_extra()))
    for kind in ("encoder", "decoder", "cross"):
        np.testing.assert_allclose(data[f"derived_mean_{kind}"], data[f"{kind}_weights"].mean(1), atol=1e-6)
    np.testing.assert_allclose(data["derived_rollout"], np_rollout(data["encoder_weights"]), atol=1e-5)
    src_pad, tgt_pad = data["mask_src_key_padding"], data["mask_tgt_key_padding"]
    for kind, valid in (("encoder", ~src_pad), ("decoder", ~tgt_pad), ("cross", ~tgt_pad)):
        ent = np_entropy(data[f"{kind}_weights"], ~data[f"{kind}_mask"], valid)
        got = data[f"derived_heads_{kind}_entropy"]
        order = list(zip(data[f"derived_heads_{kind}_layer"] - 1, data[f"derived_heads_{kind}_head"] - 1))
        np.testing.assert_allclose(got, [ent[li, hi] for li, hi in order], atol=1e-5)
    assert (data["derived_heads_decoder_next"] == 0).all() and not data["derived_heads_decoder_next_possible"].any()
    assert np.isnan(data["derived_heads_cross_prev"]).all()  # no position pattern across two sequences
    np.testing.assert_allclose(data["derived_align_weights"], data["decoder_weights"][1].mean(0), atol=1e-6)
    assert str(data["derived_align_what"]) == "mean layer 2" and str(data["derived_align_kind"]) == "decoder"


def test_npz_labels_equal_numpy_on_constructed_heads(tiny_checkpoint, tmp_path):
    ck = load_checkpoint(tiny_checkpoint, device="cpu")
    result = translate(ck, "나는 학생입니다.")
    s = len(result.maps.src_tokens)
    tokens = [f"▁t{i}" for i in range(s - 2)] + [".", "[EOS]"]  # two sink keys at the end
    eye = np.eye(s)
    heads = [
        np.roll(eye, -1, 1) * (np.arange(s) > 0)[:, None] + np.eye(s)[0] * (np.arange(s) == 0)[:, None],
        eye,
        np.roll(eye, 1, 1),
        np.tile(np.eye(s)[-1], (s, 1)),
        0.3 * eye + 0.7 / s * np.ones((s, s)),
        np.ones((s, s)) / s,
    ]
    enc = torch.tensor(np.stack(heads)[None], dtype=torch.float32)  # [1, 6, S, S]
    enc = enc / enc.sum(-1, keepdim=True)
    m = result.maps
    maps = AttentionMaps(
        enc,
        m.decoder_self,
        m.cross,
        m.src_key_padding_mask,
        m.tgt_key_padding_mask,
        m.causal_mask,
        tokens,
        list(m.tgt_tokens),
        m.applied,
    )
    fake = dataclasses.replace(result, maps=maps)
    data = np.load(export_npz(tmp_path / "c.npz", fake, len(result.steps), "encoder", (0, 0)))
    w, mask, src = data["encoder_weights"], data["encoder_mask"], list(data["src_tokens"])
    sink = np.array([t == "[EOS]" or t.lstrip("▁") in (".", "?", "!", ",") for t in src])
    expected = np_labels(w, ~mask, ~data["mask_src_key_padding"], sink)
    assert list(data["derived_heads_encoder_label"]) == expected
    assert expected[:4] == ["previous", "same", "next", "sink"] and "broad" in expected  # the case covers them


def test_compact_grid_keeps_titles_for_derived_cells(qtbot):

    from gui.state.view_spec import Cell
    from gui.widgets.head_grid import HeadGrid

    rng = np.random.default_rng(0)
    heads = [
        Cell(f"L{li + 1} H{hi + 1}", rng.random((5, 7)).astype(np.float32), None, (li, hi)) for li in range(6) for hi in range(8)
    ]
    extra = [Cell(f"L{li + 1} mean (derived)", rng.random((5, 7)).astype(np.float32), None, ("mean", li)) for li in range(6)] + [
        Cell("rollout (derived)", rng.random((5, 5)).astype(np.float32), None, ("rollout", 0))
    ]
    grid = HeadGrid(Colormap.named("viridis"))
    qtbot.addWidget(grid)
    grid.resize(600, 700)
    grid.selected = ("mean", 2)
    grid.set_cells(heads + extra, 8)
    grid.show()
    assert grid.compact and len(grid.images) == 48 + 7
    assert [h.text for h in grid.headers] == [f"H{i}" for i in range(1, 9)] + [f"L{i}" for i in range(1, 7)]
    assert grid.cell_labels[:48] == [None] * 48  # heads: headers only
    texts = [lab.text for lab in grid.cell_labels[48:]]
    assert texts[2] == "▶ L3 mean (derived)" and texts[-1] == "rollout (derived)"
    assert all("(derived)" in t for t in texts)
    for cell, im in zip(heads + extra, grid.images):
        np.testing.assert_array_equal(im.image.image, cell.matrix)
    below = [grid.views[48 + i].sceneBoundingRect() for i in range(7)]
    assert min(r.top() for r in below) > max(v.sceneBoundingRect().bottom() for v in grid.views[:48])


def test_step_zero_has_no_decoder_rows_and_exports(qtbot, window, tmp_path):
    result = type_and_translate(qtbot, window)
    window.live.tabs.setCurrentWidget(window.heads.table_panel)
    window.heads.map_tabs.setCurrentWidget(window.heads.align)
    do(qtbot, window, lambda: window.controls.set_position(0))
    window.set_view("decoder")
    assert window.vm.step == 0 and window.heads.table.rowCount() == 0
    assert "No query yet" in window.heads.table_panel.caption.text()
    window.cell_clicked(("mean", 1))
    window.heads.lines.repaint()
    assert window.vm.derived == ("mean", 1) and window.heatmap.matrix_image.shape == (0, 0)  # 0 queries yet
    assert window.heads.lines.painted == []
    data = np.load(export_npz(tmp_path / "z.npz", result, 0, "decoder", window.selected, window.heads.npz_extra()))
    assert data["derived_mean_decoder"].shape == (2, 0, 0) and data["derived_heads_decoder_entropy"].shape == (0,)
    assert data["derived_heads_encoder_entropy"].shape == (8,)  # the encoder ran: its table is full
    window.set_view("masks")
    assert window.heads.table.rowCount() == 0 and window.heads.lines.lines == []


def test_headless_screenshot_with_heads_tab_and_alignment(qtbot, tiny_checkpoint, tmp_path, monkeypatch):
    from gui import app

    shown = {}
    real_close = MainWindow.close

    def spy(self):  # what the window shows when the screenshot is taken
        shown.update(
            tab=self.live.tabs.currentWidget() is self.heads.table_panel,
            lines=self.heads.map_tabs.currentWidget() is self.heads.align,
            rows=self.heads.table.rowCount(),
            painted=len(self.heads.lines.painted),
        )
        return real_close(self)

    monkeypatch.setattr(MainWindow, "close", spy)
    out = tmp_path / "heads.png"
    assert (
        app.main(
            [
                "--checkpoint",
                str(tiny_checkpoint),
                "--text",
                TEXT,
                "--view",
                "cross",
                "--panel",
                "heads",
                "--alignment",
                "--screenshot",
                str(out),
            ]
        )
        == 0
    )
    assert out.stat().st_size > 0
    assert shown["tab"] and shown["lines"] and shown["rows"] == 2 * 4 and shown["painted"] > 0


def test_file_export_writes_the_alignment_shown(qtbot, window, tmp_path, monkeypatch):
    from PySide6 import QtWidgets

    from gui.window import view_menu as display

    result = type_and_translate(qtbot, window)
    window.set_view("encoder")
    window.select(1, 3)
    window.heads.map_tabs.setCurrentWidget(window.heads.align)
    window.heads.lines.set_focus(0)
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(tmp_path / "e.npz"), "*.npz"))
    data = np.load(display.export_dialog(window, "npz"))
    np.testing.assert_array_equal(data["derived_align_weights"], result.maps.encoder_self[1, 3].numpy())
    assert str(data["derived_align_what"]) == "head layer 2 head 4" and int(data["derived_align_focus"]) == 1
    assert list(data["derived_align_rows"]) == list(data["src_tokens"])


@pytest.mark.parametrize("n_rows", [7, 40])
def test_alignment_labels_never_overlap_and_stay_legible(qtbot, n_rows):
    """The report's case (▁I above ' at ~410 × 240 px) and a long sentence: rows keep a visible
    gap at a legible size; when they do not fit, the panel scrolls instead of squeezing them."""
    from PySide6 import QtGui

    from gui.app import register_fonts
    from gui.widgets.alignment import MIN_HEIGHT, MIN_POINT, ROW_SPACING, AlignmentPanel
    from tests.gui.widgets.test_legible_labels_and_ticks import assert_no_overlap

    panel = AlignmentPanel()
    qtbot.addWidget(panel)
    panel.setFont(QtGui.QFont(register_fonts(), 11))
    rows = (["[BOS]", "▁I", "'", "m", "▁a", "▁teacher", "."] + [f"▁w{i}" for i in range(40)])[:n_rows]
    cols = ["▁나는", "▁학생", "입니다", ".", "[EOS]"]
    panel.resize(410, 240 + 70)  # the lines area about 410 × 240 below the switch and the hint
    panel.show()
    lines = panel.lines
    lines.set_data(np.full((n_rows, len(cols)), 0.2), None, rows, cols, "target query", "source key", "t")
    qtbot.wait(20)
    lines.grab()  # paint: records the label boxes
    assert len(lines.label_rects) == n_rows + len(cols)
    assert_no_overlap(lines.label_rects)
    left = [r for r, _ in lines.label_rects[:n_rows]]
    height = left[0].height()
    gaps = [b.top() - a.bottom() for a, b in zip(left, left[1:])]
    assert min(gaps) >= (ROW_SPACING - 1) * height - 0.5  # a visible gap between ▁I and '
    assert lines._layout()["font"].pointSizeF() >= MIN_POINT
    assert all(r.bottom() <= lines.height() and r.top() >= 0 for r, _ in lines.label_rects)  # none cut off
    assert lines.minimumHeight() >= MIN_HEIGHT
    if n_rows == 40:  # more rows than fit: the panel scrolls, the font stays near the legible minimum
        assert panel.scroll.verticalScrollBar().maximum() > 0
        assert lines._layout()["font"].pointSizeF() <= MIN_POINT + 1
