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
