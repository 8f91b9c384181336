"""The layer × head grid is laid out once per shape, when the model loads: a result then only
fills images, and switching views swaps the kept layouts instead of rebuilding them."""

from __future__ import annotations

import numpy as np

from gui.state.view_spec import grid_spec, grid_titles
from tests.support.gui import open_window, type_and_translate


def test_every_view_grid_is_laid_out_at_load_and_kept_across_view_switches(qtbot, tiny_checkpoint):
    win = open_window(qtbot, tiny_checkpoint)
    cfg = win.worker.checkpoint.config
    qtbot.waitUntil(lambda: len(win.grid._layouts) == 3, timeout=20000)  # encoder, decoder = cross, masks
    shapes = {
        win.grid.shape_of(*grid_titles(k, cfg.n_encoder_layers if k == "encoder" else cfg.n_decoder_layers, cfg.n_heads))
        for k in ("encoder", "decoder", "cross", "masks")
    }
    assert shapes == set(win.grid._layouts)
    type_and_translate(qtbot, win)
    seen = {}
    for kind in ("encoder", "decoder", "cross", "masks", "encoder", "cross"):
        win.set_view(kind)
        views = tuple(id(v) for v in win.grid.views)
        assert seen.setdefault(kind, views) == views  # the same items as the first time: nothing rebuilt
        spec = grid_spec(win.vm)
        assert [c.title for c in spec.cells] == grid_titles(
            kind, cfg.n_encoder_layers if kind == "encoder" else cfg.n_decoder_layers, cfg.n_heads
        )[0]
        assert len(win.grid.views) == len(spec.cells)
        for cell, image in zip(spec.cells, win.grid.images):  # what each thumbnail holds is its cell
            drawn = image.image.image
            assert drawn.shape == cell.matrix.shape and np.allclose(drawn, cell.matrix, equal_nan=True)
    assert seen["decoder"] == seen["cross"] and seen["encoder"] != seen["decoder"]


def test_before_a_first_result_the_grid_placeholder_has_the_shape_of_the_view_shown(qtbot, tiny_checkpoint):
    """Once a model is loaded and before anything is translated, the grid shows the view selected
    (Cross-attention at the start): its layers × heads and layer means, titled, no encoder rollout;
    switching views switches the placeholder; the first result fills that very layout."""
    win = open_window(qtbot, tiny_checkpoint)
    cfg = win.worker.checkpoint.config

    def titles(kind):
        return grid_titles(kind, cfg.n_encoder_layers if kind == "encoder" else cfg.n_decoder_layers, cfg.n_heads)

    assert win.kind == "cross" and win.result is None
    qtbot.waitUntil(lambda: win.grid.layout_shape == win.grid.shape_of(*titles("cross")), timeout=20000)
    n_dec, n_heads = cfg.n_decoder_layers, cfg.n_heads
    assert win.grid.layout_shape == (n_dec * (n_heads + 1), n_heads, False, n_dec * n_heads)  # heads, a mean per layer
    assert [label.text for label in win.grid.labels] == titles("cross")[0]  # "L1 H1" … "L2 mean (derived)"
    for kind in ("encoder", "masks", "decoder"):
        win.set_view(kind)
        assert win.grid.layout_shape == win.grid.shape_of(*titles(kind))
        assert [label.text for label in win.grid.labels] == titles(kind)[0]
    win.set_view("cross")
    placeholder = tuple(id(v) for v in win.grid.views)
    type_and_translate(qtbot, win)
    assert tuple(id(v) for v in win.grid.views) == placeholder  # the result filled the placeholder's own layout
    assert [c.title for c in grid_spec(win.vm).cells] == titles("cross")[0]
