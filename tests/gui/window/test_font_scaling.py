"""Fonts scale every text: the font size and colour map choices restyle the window, Ctrl+Plus scales
every text while the window keeps its size at laptop and projector resolutions, and a screenshot at
200 % scaling is drawn at twice the pixels."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from gui.widgets.colour_scale import LUT_POINTS
from gui.widgets.fonts import minimum_sizes
from tests.support import ROOT
from tests.support.gui import TEXT, type_and_translate


def test_font_size_and_colormap(qtbot, window):
    type_and_translate(qtbot, window)
    size = window.font_size
    window.change_font(+2)
    assert QtWidgets.QApplication.instance().font().pointSize() == size + 2
    window.set_colormap("cividis")
    cividis = pg.colormap.get("cividis")
    # the enlarged map's colour bar sets its own 256-entry table; the thumbnails have LUT_POINTS entries
    np.testing.assert_array_equal(np.asarray(window.heatmap.image.lut), cividis.getLookupTable(nPts=256))
    np.testing.assert_array_equal(np.asarray(window.grid.images[0].image.lut), cividis.getLookupTable(nPts=LUT_POINTS))


def _px(css: str) -> int:
    return int(css.removesuffix("pt"))


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_ctrl_plus_scales_every_text_and_the_window_keeps_its_size(qtbot, window, size):
    window.resize(*size)
    type_and_translate(qtbot, window)
    window.set_view("cross")
    base = window.font_size
    for _ in range(3):
        qtbot.keyClick(window, QtCore.Qt.Key.Key_Plus, QtCore.Qt.KeyboardModifier.ControlModifier)
    qtbot.wait(50)
    pt = window.font_size
    assert pt == base + 6
    hm = window.heatmap
    assert _px(hm.plot.titleLabel.opts["size"]) == pt + 1  # title
    assert _px(hm.plot.getAxis("left").labelStyle["font-size"]) == pt  # axis titles
    assert _px(hm.plot.getAxis("bottom").labelStyle["font-size"]) == pt
    assert hm.colorbar.axis.style["tickFont"].pointSize() == pt  # colour-bar values
    assert hm.plot.getAxis("left").style["tickFont"].pointSize() == pt  # token labels
    assert all(t.textItem.font().pointSize() == pt for t in window.topk.texts)  # top-k values
    assert window.masks.decoder_self.getAxis("left").style["tickFont"].pointSize() == pt
    # the title's row is as tall as its text (pyqtgraph fixes it at 30 px otherwise)
    assert hm.plot.titleLabel.maximumHeight() >= QtGui.QFontMetrics(hm.font).height()
    assert (window.width(), window.height()) == size  # never widens itself
    mins = minimum_sizes(hm.font)
    for name, (w, h) in mins.items():  # no panel collapses: the window scrolls instead
        widget = getattr(window, name)
        assert widget.width() >= w and widget.height() >= h, name
    # colour-bar labels are whole: the bar's axis is wide enough for "1.0" at this font
    assert hm.colorbar.axis.width() >= QtGui.QFontMetricsF(hm.font).horizontalAdvance("0.0")
    assert hm.colorbar.sceneBoundingRect().right() <= hm.width() + 1
    for kind in ("cross", "masks"):  # nothing is laid out wider than the widget that shows it
        window.set_view(kind)
        qtbot.wait(50)
        for w in (window.grid, hm):
            assert w.ci.geometry().width() <= w.width() + 1, (kind, type(w).__name__)
        for v in window.masks.views():
            assert v.getPlotItem().geometry().width() <= v.width() + 1
    qtbot.keyClick(window, QtCore.Qt.Key.Key_0, QtCore.Qt.KeyboardModifier.ControlModifier)
    assert window.font_size == base


def _run(*args, env=None):
    import os

    e = dict(os.environ, QT_QPA_PLATFORM="offscreen", **(env or {}))
    return subprocess.run([sys.executable, "main.py", *args], cwd=ROOT, capture_output=True, text=True, env=e, timeout=600)


def test_screenshot_at_200_percent_scaling(tiny_checkpoint, tmp_path):
    out = tmp_path / "hidpi.png"
    r = _run(
        "--checkpoint",
        str(tiny_checkpoint),
        "--text",
        TEXT,
        "--size",
        "1366x768",
        "--screenshot",
        str(out),
        env={"QT_SCALE_FACTOR": "2"},
    )
    assert r.returncode == 0, r.stderr
    img = QtGui.QImage(str(out))
    assert (img.width(), img.height()) == (2 * 1366, 2 * 768)  # the requested size, at twice the pixels
