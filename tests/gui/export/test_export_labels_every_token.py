"""File → Export of the enlarged map draws every token label on both axes (up to 64 per axis),
while the map on screen keeps thinning them; beyond 64 the status bar says the export thinned."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtGui, QtWidgets

from gui.export.map_image import FULL_LABELS_UP_TO, export_map
from gui.widgets.colormap import Colormap
from gui.widgets.heatmap import Heatmap
from gui.window import view_menu as display
from tests.support.gui import type_and_translate


def _drawn(hm: Heatmap) -> tuple[list[int], list[int]]:
    """Token indices whose labels ``hm`` drew on screen, once its layout has settled (the title
    and the axes size themselves as they are first drawn)."""
    for _ in range(3):
        QtWidgets.QApplication.processEvents()
        hm.grab()
    return ([i for _, _, i in hm.plot.getAxis("left").drawn], [i for _, _, i in hm.plot.getAxis("bottom").drawn])


def _small_map(qtbot, rows: int, cols: int, size=(400, 300)) -> Heatmap:
    hm = Heatmap(Colormap.named("viridis"))
    qtbot.addWidget(hm)
    hm.resize(*size)
    rng = np.random.default_rng(0)
    hm.set_matrix(
        rng.random((rows, cols)).astype(np.float32),
        None,
        [f"▁tok{i}" for i in range(rows)],
        [f"열쇠{j}" for j in range(cols)],
        title="cross-attention, layer 1, head 1",
    )
    hm.show()
    qtbot.wait(20)
    return hm


def test_export_draws_every_label_while_the_screen_thins(qtbot, tmp_path):
    hm = _small_map(qtbot, 20, 12)
    rows_on_screen, _ = _drawn(hm)
    assert 0 < len(rows_on_screen) < 20  # 300 px high: the screen thins the 20 query labels
    out = export_map(tmp_path / "map.png", hm)
    assert out.rows_drawn == list(range(20)) and out.cols_drawn == list(range(12))
    assert out.note == "" and not out.thinned
    img = QtGui.QImage(str(out.path))
    assert (img.width(), img.height()) == out.size
    line = QtGui.QFontMetricsF(hm.font).height()
    assert img.height() >= 2 * 20 * line  # 2x export, one text line per query at least
    # the map on screen is unchanged and still thins
    assert hm.size().toTuple() == (400, 300)
    assert _drawn(hm)[0] == rows_on_screen


def test_export_svg_draws_every_label_too(qtbot, tmp_path):
    hm = _small_map(qtbot, 20, 30)
    rows_on_screen, cols_on_screen = _drawn(hm)
    assert len(rows_on_screen) < 20 and len(cols_on_screen) < 30
    out = export_map(tmp_path / "map.svg", hm, "svg")
    assert out.path.suffix == ".svg" and out.path.exists()
    assert out.rows_drawn == list(range(20)) and out.cols_drawn == list(range(30))


def test_export_of_a_map_whose_labels_fit_is_the_map_itself(qtbot, tmp_path):
    hm = _small_map(qtbot, 3, 4, size=(500, 400))
    assert _drawn(hm) == ([0, 1, 2], [0, 1, 2, 3])
    out = export_map(tmp_path / "map.png", hm)
    assert out.size == (2 * hm.width(), QtGui.QImage(str(out.path)).height())
    assert (out.rows_drawn, out.cols_drawn) == ([0, 1, 2], [0, 1, 2, 3])


@pytest.mark.parametrize("rows, thinned", [(FULL_LABELS_UP_TO, False), (FULL_LABELS_UP_TO + 16, True)])
def test_export_labels_all_up_to_64_and_says_when_it_thins(qtbot, tmp_path, rows, thinned):
    hm = _small_map(qtbot, rows, 5)
    out = export_map(tmp_path / "map.png", hm)
    assert out.thinned is thinned
    if thinned:
        assert 0 < len(out.rows_drawn) < rows and out.rows_drawn[0] == 0
        assert f"of {rows} queries" in out.note
    else:
        assert out.rows_drawn == list(range(rows)) and out.note == ""
    assert out.cols_drawn == list(range(5))


def test_file_export_of_the_window_map_labels_every_token(qtbot, window, tmp_path, monkeypatch):
    window.inputs.pad_to.setValue(48)  # 48 source columns: too many for the on-screen key axis
    type_and_translate(qtbot, window)
    window.set_view("cross")
    qtbot.wait(50)
    hm = window.heatmap
    rows, cols = len(hm.row_tokens), len(hm.col_tokens)
    assert cols == 48
    assert len(_drawn(hm)[1]) < cols  # thinned on screen
    written = []
    monkeypatch.setattr(
        display, "export_map", lambda *a, **k: written.append(export_map(*a, **k)) or written[-1], raising=False
    )  # the old export_dialog had none: nothing recorded, the test fails
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(tmp_path / "m.png"), "*.png"))
    path = display.export_dialog(window, "map")
    assert path == tmp_path / "m.png" and path.exists()
    img = QtGui.QImage(str(path))  # 2x export with room for one text line per query
    assert img.height() >= 2 * rows * QtGui.QFontMetricsF(hm.font).height()
    assert len(written) == 1
    assert written[0].rows_drawn == list(range(rows)) and written[0].cols_drawn == list(range(cols))
    w, h = written[0].size
    assert window.status.currentMessage() == f"saved {path}: the enlarged map, {w} × {h} px"
    assert len(_drawn(hm)[1]) < cols  # the screen still thins
