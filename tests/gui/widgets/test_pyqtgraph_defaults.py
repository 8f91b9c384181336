"""pyqtgraph's options (white background, row-major images) hold without ``gui.app.main``."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtGui

from gui.widgets.colormap import Colormap
from gui.widgets.heatmap import Heatmap
from gui.widgets.pg_config import OPTIONS

# --- pyqtgraph's options (white background, row-major images) hold for a MainWindow or a Heatmap
# built without ``gui.app.main`` (scripts, tests).


@pytest.fixture
def pg_defaults():
    """pyqtgraph's own defaults (black background, grey text, col-major) for the test; the options
    before it come back afterwards."""
    saved = dict(pg.CONFIG_OPTIONS)
    pg.setConfigOptions(imageAxisOrder="col-major", background="k", foreground="d", antialias=False)
    yield
    pg.setConfigOptions(**saved)


def _corner_rgb(widget) -> tuple[int, int, int]:
    img = widget.grab().toImage()
    c = QtGui.QColor(img.pixel(2, 2))
    return c.red(), c.green(), c.blue()


def test_main_window_without_main_has_a_white_background(qtbot, pg_defaults):
    from gui.window.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(1200, 800)
    win.show()
    qtbot.wait(20)
    for widget in (win.heatmap, win.grid):
        assert widget.backgroundBrush().color().name() == "#ffffff"
        assert _corner_rgb(widget) == (255, 255, 255)
    assert {k: pg.getConfigOption(k) for k in OPTIONS} == OPTIONS


def test_heatmap_built_alone_is_white_and_row_major(qtbot, pg_defaults):
    hm = Heatmap(Colormap.named("viridis"))
    qtbot.addWidget(hm)
    hm.resize(400, 300)
    matrix = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]], dtype=np.float32)  # 2 queries x 3 keys
    hm.set_matrix(matrix, None, ["a", "b"], ["x", "y", "z"])
    hm.show()
    qtbot.wait(20)
    assert hm.backgroundBrush().color().name() == "#ffffff"
    assert _corner_rgb(hm) == (255, 255, 255)
    assert hm.image.width() == 3 and hm.image.height() == 2  # columns = keys, rows = queries
    assert pg.getConfigOption("imageAxisOrder") == "row-major"
