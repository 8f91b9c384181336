"""File → Export writes one file, named after what it holds, and the status bar says where."""

from __future__ import annotations

import numpy as np
from PySide6 import QtGui, QtWidgets

from tests.support.gui import type_and_translate


def test_export_writes_one_named_file_and_says_so(qtbot, window, tmp_path, monkeypatch):
    from gui.export.files import start_dir
    from gui.window import view_menu as display

    type_and_translate(qtbot, window)
    window.set_view("cross")
    asked = []

    def fake_dialog(parent, caption, proposed, filt):
        asked.append(proposed)
        return str(tmp_path / f"out-{len(asked)}"), filt

    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", fake_dialog)
    before = start_dir()
    out = display.export_dialog(window, "map")
    assert asked[0].startswith(str(before)) and asked[0].endswith("attention-map.png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out-1.png"]  # one file, no silent -grid.png
    msg = window.status.currentMessage()
    assert str(out) in msg and "enlarged map" in msg
    img = QtGui.QImage(str(out))
    assert img.width() == 2 * int(window.heatmap.ci.boundingRect().width())
    assert start_dir() == tmp_path  # the next dialog opens where the last export went
    display.export_dialog(window, "grid")
    assert "grid" in window.status.currentMessage() and (tmp_path / "out-2.png").exists()
    k = window.controls.position
    path = display.export_dialog(window, "npz")
    data = np.load(path)
    np.testing.assert_array_equal(data["cross_weights"], window.result.maps.cross[:, :, :k].numpy())
    assert list(data["src_tokens"]) == window.result.maps.src_tokens
    assert int(data["step"]) == k
    assert data["selected"].tolist() == [window.selected[0] + 1, window.selected[1] + 1]  # 1-based, as titles
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out-1.png", "out-2.png", "out-3.npz"]
