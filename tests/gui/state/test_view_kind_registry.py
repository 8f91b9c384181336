"""A new view is one registry entry (gui/state/view_kinds.py): this test adds one, a cross-attention
"coverage" view (the running mean of each source token's weight over the target queries so far,
the quantity coverage models track), with ``monkeypatch.setitem`` on the registry and nothing
else, and finds it in the view selector, the grid and the enlarged map, ``--view``, a lecture file
(parsed, checked, saved, shown), the .npz export and the grid export."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PySide6 import QtGui

from core.transformer.kinds import AttentionKind
from gui.state import view_kinds
from gui.state.view_data import MapData, StepMaps, cross_view
from gui.state.view_kinds import ViewKind
from tests.support.gui import WORK_TIMEOUT_MS, open_window, type_and_translate

TITLE = "Cross-attention coverage (running mean over queries)"


def coverage(step: StepMaps) -> MapData:
    """Row t: the mean of the cross-attention rows 0..t, ``[L, H, k, S]`` (rows still sum to 1)."""
    m = cross_view(step)
    n = np.arange(1, m.weights.shape[-2] + 1, dtype=m.weights.dtype)[:, None]
    return MapData(np.cumsum(m.weights, axis=-2) / n, m.mask, m.row_tokens, m.col_tokens, m.row_label, m.col_label)


@pytest.fixture
def coverage_view(monkeypatch) -> ViewKind:
    kind = ViewKind("coverage", TITLE, AttentionKind.CROSS, coverage, cli="cross-coverage")
    monkeypatch.setitem(view_kinds.REGISTRY, kind.name, kind)  # the one entry
    return kind


def expected(result, k: int) -> np.ndarray:
    """``[L, H, k, S]`` computed apart from the view: each row's mean over the cross rows up to it."""
    cross = result.maps.cross[:, :, :k].double()
    return torch.stack([cross[:, :, : t + 1].mean(dim=2) for t in range(k)], dim=2).numpy()


def test_a_registered_view_parses_from_the_command_line_and_lecture_files(coverage_view, tiny_checkpoint):
    from core.textio import read_json
    from core.transformer.config import ModelConfig
    from gui.app import build_parser, check_layer_head
    from gui.state.lecture import parse_lecture
    from gui.state.lecture_check import check_step
    from gui.state.lecture_toml import step_toml

    args = build_parser().parse_args(["--view", "cross-coverage"])
    assert args.view == "cross-coverage" and view_kinds.by_cli(args.view) is coverage_view
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--view", "coverage-typo"])
    config = ModelConfig(**read_json(tiny_checkpoint / "config.json"))
    check_layer_head("coverage", config.n_decoder_layers, config.n_heads, config)  # the decoder's layers
    with pytest.raises(ValueError, match="--layer must be 1..2 and --head 1..4"):
        check_layer_head("coverage", 3, 1, config)

    step = parse_lecture('[[steps]]\nsentence = "집에 누군가 있어?"\nview = "coverage"\nlayer = 2\nhead = 3\n').steps[0]
    assert (step.view, step.layer, step.head, step.errors) == ("coverage", 2, 3, [])
    assert check_step(step, config) == [] and 'view = "coverage"' in step_toml(step)
    step.layer = 3
    assert check_step(step, config) == ["lecture step 1, layer: 3 is out of range 1..2 (the model has 2 decoder layers)"]
    typo = parse_lecture('[[steps]]\nsentence = "집에 누군가 있어?"\nview = "coverag"\n').steps[0]
    assert typo.errors == ["lecture step 1, view: 'coverag' is not one of encoder, decoder, cross, masks, coverage"]


def test_a_registered_view_is_in_the_selector_grid_map_and_exports(coverage_view, qtbot, tiny_checkpoint, tmp_path):
    from gui.export.files import export_npz
    from gui.export.grid_image import export_grid, grid_header

    win = open_window(qtbot, tiny_checkpoint)
    menu = [win.view_selector.itemText(i) for i in range(win.view_selector.count())]
    assert menu == [v.title for v in view_kinds.all_kinds()] and menu[-1] == TITLE and len(menu) == 5
    type_and_translate(qtbot, win)
    win.view_selector.setCurrentIndex(4)  # as a click in the selector
    assert win.kind == "coverage"
    win.select(1, 2)
    r, k = win.result, win.controls.position
    want = expected(r, k)
    assert k > 1 and want.shape == (2, 4, k, len(r.maps.src_tokens))

    cells = win.grid.cells
    assert [c.title for c in cells] == [f"L{li} H{hi}" for li in (1, 2) for hi in (1, 2, 3, 4)] + [
        "L1 mean (derived)",
        "L2 mean (derived)",
    ]  # no rollout: the entry names the means only
    for li in range(2):
        for hi in range(4):
            np.testing.assert_allclose(cells[4 * li + hi].matrix, want[li, hi], atol=1e-6)
    np.testing.assert_allclose(cells[8].matrix, want[0].mean(axis=0), atol=1e-6)
    np.testing.assert_allclose(win.heatmap.matrix, want[1, 2], atol=1e-6)
    assert win.heatmap.plot.titleLabel.text == f"{TITLE} — layer 2, head 3"
    assert not np.allclose(want[1, 2], r.maps.cross[1, 2, :k].numpy(), atol=1e-3)  # not the cross view again

    out = export_npz(tmp_path / "x.npz", r, k, win.kind, win.selected)
    with np.load(out) as z:
        np.testing.assert_allclose(z["coverage_weights"], want, atol=1e-6)
        np.testing.assert_allclose(z["derived_mean_coverage"], want.mean(axis=1), atol=1e-6)
        assert str(z["view"]) == "coverage" and z["derived_heads_coverage_layer"].tolist() == [1, 1, 1, 1, 2, 2, 2, 2]
    header = grid_header(win.vm)
    assert header.title == TITLE and header.layout == "2 layers × 4 heads" and header.stem == f"attention-grid-coverage-step{k}"
    written = export_grid(tmp_path / f"{header.stem}.png", win.grid, header)
    img = QtGui.QImage(str(written.path))
    assert (img.width(), img.height()) == written.size and written.header_height > 0 and img.height() > written.header_height


def test_a_lecture_step_shows_a_registered_view(coverage_view, qtbot, tiny_checkpoint, tmp_path):
    from gui.state.lecture import load_lecture
    from gui.window.lecture import open_lecture

    path = tmp_path / "coverage.toml"
    path.write_text('[[steps]]\nsentence = "집에 누군가 있어?"\nview = "coverage"\nlayer = 2\nhead = 1\n', encoding="utf-8")
    win = open_window(qtbot, tiny_checkpoint)
    driver = open_lecture(win, load_lecture(path), present=False)
    qtbot.waitUntil(lambda: driver.done and driver.index == 0, timeout=WORK_TIMEOUT_MS)
    assert driver.page.error == "" and win.kind == "coverage" and win.view_selector.currentText() == TITLE
    assert TITLE in driver.page.drawn
    np.testing.assert_allclose(win.heatmap.matrix, expected(win.result, win.vm.step)[1, 0], atol=1e-6)
    driver.detach()


def test_the_command_line_opens_a_registered_view(coverage_view, qtbot, tiny_checkpoint, tmp_path, monkeypatch):
    """``main.py --view cross-coverage --screenshot``, run in this process (so the entry is there)."""
    from gui import app
    from gui.window.main_window import MainWindow

    shown = []
    set_view = MainWindow.set_view
    monkeypatch.setattr(MainWindow, "set_view", lambda self, kind: (shown.append((self, kind)), set_view(self, kind)))
    out = tmp_path / "x.png"
    argv = ["--checkpoint", str(tiny_checkpoint), "--text", "집에 누군가 있어?", "--view", "cross-coverage"]
    assert app.main([*argv, "--layer", "2", "--head", "4", "--size", "1000x700", "--screenshot", str(out)]) == 0
    win, kind = shown[-1]
    assert kind == "coverage" and win.kind == "coverage"
    assert win.heatmap.plot.titleLabel.text == f"{TITLE} — layer 2, head 4"
    np.testing.assert_allclose(win.heatmap.matrix, expected(win.result, win.vm.step)[1, 3], atol=1e-6)
    assert QtGui.QImage(str(out)).width() == 1000
