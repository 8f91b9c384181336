"""Present mode: it cycles the view kind, layer and head, shows the derived cell the window
enlarges, keeps the enlarged head through the Masks view, and names each row at 720p."""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtGui

from gui.state.view_model import ViewModel
from gui.window.view_menu import toggle_present
from tests.gui.widgets.test_thumbnail_colours import rgba_of
from tests.support.gui import open_window, type_and_translate


def test_presentation_mode_cycles_kind_layer_head(qtbot, window):
    type_and_translate(qtbot, window)
    window.set_view("cross")
    window.select(0, 0)
    qtbot.keyClick(window, QtCore.Qt.Key.Key_F11)
    pw = window.present_window
    assert pw is not None and pw.isVisible()
    assert pw.heatmap.font.pointSize() >= 22
    assert "layer 1 / 2, head 1 / 4" in pw.heatmap.plot.titleLabel.text
    k = window.controls.position
    np.testing.assert_allclose(pw.heatmap.image.image, window.result.maps.cross[0, 0, :k].numpy(), atol=1e-6)
    qtbot.keyClick(pw, QtCore.Qt.Key.Key_H)
    qtbot.keyClick(pw, QtCore.Qt.Key.Key_L)
    assert window.selected == (1, 1) and "layer 2 / 2, head 2 / 4" in pw.heatmap.plot.titleLabel.text
    np.testing.assert_allclose(pw.heatmap.image.image, window.result.maps.cross[1, 1, :k].numpy(), atol=1e-6)
    qtbot.keyClick(pw, QtCore.Qt.Key.Key_V)
    assert window.kind == "masks" and "mask" in pw.heatmap.plot.titleLabel.text
    qtbot.keyClick(pw, QtCore.Qt.Key.Key_Escape)
    assert not pw.isVisible()


def test_presentation_mode_shows_the_derived_cell_the_window_enlarges(qtbot, window):
    type_and_translate(qtbot, window)
    window.set_view("encoder")
    window.select(1, 2)
    window.cell_clicked(("rollout", 0))  # as a click on the grid's rollout cell does
    qtbot.keyClick(window, QtCore.Qt.Key.Key_F11)
    pw = window.present_window
    from core.analysis import head_stats

    rollout = head_stats.rollout(window.result.maps.encoder_self).numpy()
    assert "rollout" in pw.heatmap.plot.titleLabel.text and "(derived)" in pw.heatmap.plot.titleLabel.text
    np.testing.assert_allclose(pw.heatmap.image.image, rollout, atol=1e-6)
    np.testing.assert_allclose(pw.heatmap.image.image, window.heatmap.image.image, atol=0)
    # M: the current layer's mean over heads, in both windows; L steps to the next layer's mean
    window.set_view("cross")
    k = window.controls.position
    qtbot.keyClick(pw, QtCore.Qt.Key.Key_M)
    layer = window.selected[0]
    assert window.vm.derived == ("mean", layer) and "mean over heads (derived)" in pw.heatmap.plot.titleLabel.text
    np.testing.assert_allclose(pw.heatmap.image.image, window.result.maps.cross[layer, :, :k].mean(0).numpy(), atol=1e-6)
    np.testing.assert_allclose(pw.heatmap.image.image, window.heatmap.image.image, atol=0)
    qtbot.keyClick(pw, QtCore.Qt.Key.Key_L)
    assert window.vm.derived == ("mean", (layer + 1) % 2)
    np.testing.assert_allclose(
        pw.heatmap.image.image, window.result.maps.cross[(layer + 1) % 2, :, :k].mean(0).numpy(), atol=1e-6
    )
    qtbot.keyClick(pw, QtCore.Qt.Key.Key_M)  # back to a head
    assert window.vm.derived is None and "head" in pw.heatmap.plot.titleLabel.text


# --- Passing through the Masks view (which uses the selection as a mask index) keeps the enlarged
# head: V in Present mode cycles encoder → decoder → cross → masks, and a lecturer following one
# head through the views got layer 1, head 1 after the Masks view instead.


def test_view_model_restores_the_head_after_masks():
    vm = ViewModel()
    vm.set_kind("cross")
    vm.select(1, 2)
    vm.set_kind("masks")
    assert vm.selected == (0, 0)  # the first mask
    vm.select(2, 0)  # the third mask
    vm.set_kind("encoder")
    assert vm.selected == (1, 2)
    vm.set_kind("decoder")
    vm.select(0, 3)
    vm.set_kind("masks")
    vm.set_kind("masks")  # choosing Masks again changes nothing remembered
    vm.set_kind("cross")
    assert vm.selected == (0, 3)


def test_present_v_keeps_the_head_through_masks(qtbot, window):
    type_and_translate(qtbot, window)
    window.set_view("cross")
    window.select(1, 2)
    toggle_present(window)
    pw = window.present_window
    titles = []
    for _ in range(4):  # cross → masks → encoder → decoder → cross
        qtbot.keyClick(pw, QtCore.Qt.Key.Key_V)
        titles.append(pw.heatmap.plot.titleLabel.text)
    assert titles[0].startswith("decoder self mask given")
    assert [t.split(" — ")[-1] for t in titles[1:]] == ["layer 2 / 2, head 3 / 4"] * 3, titles
    assert titles[3].startswith("Cross-attention") and window.vm.selected == (1, 2)
    pw.close()


def _ink_rows(axis, rect: QtCore.QRectF, text: str) -> tuple[float, float]:
    """Top and bottom (px, axis coordinates) of the ink of one row label drawn as the axis draws it."""
    bounds = axis.boundingRect()
    img = QtGui.QImage(int(bounds.width()) + 1, int(bounds.height()) + 1, QtGui.QImage.Format.Format_RGB32)
    img.fill(QtGui.QColor("white"))
    p = QtGui.QPainter(img)
    p.translate(-bounds.left(), -bounds.top())
    p.setFont(axis._font())
    p.setPen(QtGui.QColor("black"))
    align = QtCore.Qt.AlignmentFlag
    p.drawText(rect, int(align.AlignRight | align.AlignVCenter | QtCore.Qt.TextFlag.TextDontClip), text)  # the axis's flags
    p.end()
    rows = np.flatnonzero(rgba_of(img)[..., :3].min(axis=-1).min(axis=1) < 200)
    return rows[0] + bounds.top(), rows[-1] + 1 + bounds.top()


def test_present_mode_row_labels_sit_in_their_own_rows_at_720p(qtbot):
    """'I'm …' at 1280 x 720 in Present mode: "▁I" over "'" read as one label, the apostrophe hung
    at the top of its row right under the I. Every row is named, each label's ink is centred on its
    row (within 1.5 px) and stays inside the row, so neighbours never touch."""
    from tests.support import shipped

    win = open_window(qtbot, shipped(), size=(1280, 720))
    try:
        type_and_translate(qtbot, win, "나는 학생이고 매일 아침 일찍 학교에 갑니다.")
        tokens = [s.token for s in win.result.steps]
        assert tokens[:3] == ["▁I", "'", "m"] and len(tokens) >= 12  # the case under test
        win.set_view("cross")
        toggle_present(win)
        pw = win.present_window
        pw.showNormal()
        pw.resize(1280, 720)
        for _ in range(3):
            pw.heatmap.grab()
            qtbot.wait(30)
        left = pw.heatmap.plot.getAxis("left")
        # The labels as laid out for the axis's final geometry: after other windows in the same process the
        # last layout can date from the axis's previous height (rows about 1 px off, not yet explained).
        # This test checks the centring itself.
        left.picture = None
        pw.heatmap.grab()
        view = left.linkedView()
        ticks = {i: left.mapFromScene(view.mapViewToScene(QtCore.QPointF(0, v))).y() for i, (v, _t) in enumerate(left.tokens())}
        assert sorted(i for _, _, i in left.drawn) == list(
            range(len(tokens))
        )  # every row named: [BOS] and all but the last token
        pitch = abs(ticks[1] - ticks[0])
        ink = {i: _ink_rows(left, rect, text) for rect, text, i in left.drawn}
        for i, (top, bottom) in ink.items():
            assert abs((top + bottom) / 2 - ticks[i]) <= 1.5, (i, top, bottom, ticks[i])
            assert ticks[i] - pitch / 2 <= top and bottom <= ticks[i] + pitch / 2  # inside its own row
        above, below = sorted((ink[1], ink[2]))  # "▁I" and "'"
        assert below[0] - above[1] >= pitch / 3  # a third of a row of clear space between them
        pw.close()
    finally:
        win.close()
