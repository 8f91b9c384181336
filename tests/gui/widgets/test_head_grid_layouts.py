"""The layer × head grid is laid out once per shape, when the model loads: a result then only
fills images, and switching views swaps the kept layouts instead of rebuilding them."""

from __future__ import annotations

import numpy as np

from gui.state.view_spec import grid_titles
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
        spec = win.vm.frame().grid
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
    assert [c.title for c in win.vm.frame().grid.cells] == titles("cross")[0]


def test_after_choosing_beam_paths_a_view_switch_leaves_no_old_layout_drawn(qtbot):
    """A beam-4 result whose other hypotheses were clicked, then another view: the layout shown
    before was removed from the scene but stayed in its BSP index and was still drawn under the
    new one (rows and titles overlapping; File → Export head grid saved it so). Nothing but the
    shown layout may be drawn in the grid."""
    from PySide6 import QtCore, QtGui

    from tests.support import shipped
    from tests.support.gui import do

    win = open_window(qtbot, shipped(), size=(1280, 720))
    try:
        win.inputs.beam.setValue(4)
        win.inputs.decoding.setCurrentIndex(1)  # beam search
        for text in ("디코더는 인코더의 출력을 봅니다.", "어제 친구와 함께 재미있는 영화를 봤어요."):
            win.inputs.text.setText(text)
            do(qtbot, win, win.translate)
            do(qtbot, win, win.controls.end_button.click)
        table = win.live.beam.table
        assert win.result.mode == "beam" and table.rowCount() > 3
        for row in (1, 3):  # other hypotheses: path commands
            do(qtbot, win, lambda row=row: table.cellClicked.emit(row, 1))
        win.set_view("encoder")
        qtbot.wait(100)
        scene, area = win.grid.scene(), win.grid.sceneRect()
        assert all(item.scene() is scene for item in scene.items(area))  # no removed item left in the index
        win.grid.ci.hide()  # the shown layout away: nothing else may be drawn
        img = QtGui.QImage(int(area.width()), int(area.height()), QtGui.QImage.Format.Format_RGB32)
        img.fill(QtGui.QColor("white"))
        painter = QtGui.QPainter(img)
        scene.render(painter, QtCore.QRectF(img.rect()), area)
        painter.end()
        win.grid.ci.show()
        bits = img.constBits()
        assert set(bytes(bits)) <= {0xFF}, "items of a removed layout are still drawn"
    finally:
        win.close()
