"""The window on a projector: the enlarged map first, docks that fit the screen, never larger
than the screen. (Screenshots at 1280×720 … 2560×1440, 100 % and 200 %: docs/layout.md.)"""

from __future__ import annotations

import pytest
from PySide6 import QtCore, QtGui

from gui.app import fit_to_screen
from tests.support import SHIPPED
from tests.support.gui import do, open_window, tick_specs, type_and_translate


@pytest.fixture(autouse=True)
def _keep_app_font(qapp):
    """Tests here make the font larger (View → Larger font sets the application's font): the next
    test module starts from the font it had."""
    font = qapp.font()
    yield
    qapp.setFont(font)


class _Screen:
    def __init__(self, w: int, h: int) -> None:
        self.rect = QtCore.QRect(0, 0, w, h)

    def availableGeometry(self):
        return self.rect


def test_the_window_never_opens_larger_than_the_screen():
    assert fit_to_screen((1600, 950), _Screen(1280, 680)) == (1280, 680)
    assert fit_to_screen((1600, 950), _Screen(2560, 1400)) == (1600, 950)
    assert fit_to_screen((900, 2000), _Screen(1366, 728)) == (900, 728)
    assert fit_to_screen((1600, 950), None) == (1600, 950)


def _fully_visible(widget) -> bool:
    """Shown, and its whole rectangle lies inside the window (nothing scrolled or cut off)."""
    win = widget.window()
    rect = QtCore.QRect(widget.mapTo(win, QtCore.QPoint(0, 0)), widget.size())
    return widget.isVisible() and win.rect().contains(rect)


def _on_screen(widget) -> bool:
    win = widget.window()
    return widget.isVisible() and win.rect().intersects(QtCore.QRect(widget.mapTo(win, QtCore.QPoint(0, 0)), widget.size()))


def test_at_1280x720_the_grid_and_the_larger_map_show_without_scrolling(qtbot, tiny_checkpoint):
    win = open_window(qtbot, tiny_checkpoint, size=(1280, 720))
    type_and_translate(qtbot, win, "비가 와서 우리는 집에 있었어요.")
    qtbot.wait(50)
    assert (win.width(), win.height()) == (1280, 720)
    scroll = win.centralWidget()
    assert scroll.horizontalScrollBar().maximum() == 0 and scroll.verticalScrollBar().maximum() == 0
    assert _fully_visible(win.grid) and _fully_visible(win.heatmap)
    hm, grid = win.heatmap, win.grid
    assert hm.width() * hm.height() > grid.width() * grid.height()  # the map is the largest element
    shown_masks = win.masks_dock.widget().viewport()  # the masks scroll inside their dock
    for other in (win.topk, win.inputs, shown_masks):  # (a dock behind another's tab lies off screen)
        assert not _on_screen(other) or hm.width() * hm.height() > other.width() * other.height()
    assert win.controls.isVisible() and _fully_visible(win.inputs.translate_button)
    assert win.masks_dock in win.tabifiedDockWidgets(win.tabs_dock)  # short screen: masks join the tabs


def test_docks_can_be_hidden_and_shown_from_the_view_menu(qtbot, tiny_checkpoint):
    win = open_window(qtbot, tiny_checkpoint, size=(1600, 950))
    actions = {a.text(): a for a in win.panels_menu.actions()}
    assert set(actions) == {"Next-token candidates", "Experiments and analysis", "Masks given"}
    assert win.dockWidgetArea(win.masks_dock) == QtCore.Qt.DockWidgetArea.BottomDockWidgetArea  # tall: below
    width_before = win.heatmap.width()
    actions["Next-token candidates"].trigger()
    actions["Experiments and analysis"].trigger()
    qtbot.waitUntil(lambda: not win.topk_dock.isVisible() and not win.tabs_dock.isVisible())
    qtbot.waitUntil(lambda: win.heatmap.width() > width_before)  # the map takes the room
    actions["Next-token candidates"].trigger()
    qtbot.waitUntil(win.topk_dock.isVisible)


def test_present_mode_at_720p_follows_the_font_and_shows_values_labels_and_the_translation(qtbot, tiny_checkpoint):
    from gui.window.present import PRESENT_EXTRA
    from gui.window.view_menu import toggle_present

    win = open_window(qtbot, tiny_checkpoint)
    type_and_translate(qtbot, win, "비가 와서 우리는 집에 있었어요.")
    if win.controls.position != 8:
        do(qtbot, win, lambda: win.controls.set_position(8))  # a map of at most 16 × 16 prints its values
    win.set_view("cross")
    toggle_present(win)
    pw = win.present_window
    pw.showNormal()
    pw.resize(1280, 720)
    qtbot.wait(100)
    assert pw.font().pointSize() == win.font_size + PRESENT_EXTRA
    win.change_font(+2)  # View → Larger font reaches Present
    qtbot.wait(50)
    assert pw.font().pointSize() == win.font_size + PRESENT_EXTRA and pw.heatmap.font.pointSize() == pw.font().pointSize()
    qtbot.keyClick(pw, QtCore.Qt.Key.Key_Minus, QtCore.Qt.KeyboardModifier.ControlModifier)  # Ctrl − inside Present
    assert win.font_size == win.base_font_size and pw.font().pointSize() == win.base_font_size + PRESENT_EXTRA
    assert win.vm.text_at() and win.vm.text_at() in pw.caption.text()  # the translation so far beside the source
    assert win.result.source.text in pw.caption.text()
    hm = pw.heatmap
    for _ in range(3):
        hm.grab()
        qtbot.wait(30)
    rows, cols = hm.matrix.shape
    assert len(hm.values.shown()) == rows * cols  # every value at 720p
    for axis, n in ((hm.plot.getAxis("left"), rows), (hm.plot.getAxis("bottom"), cols)):
        assert [i for _, _, i in axis.drawn] == list(range(n))  # every label
    win.set_view("masks")  # the Masks view keeps the sentence above its mask
    qtbot.wait(30)
    assert win.result.source.text in pw.caption.text() and "masks · 1 / " in pw.caption.text()
    pw.close()


def _sideways_scroll(widget) -> list[str]:
    """The scroll areas in and around ``widget`` that scroll sideways (their content wider than them)."""
    from PySide6 import QtWidgets

    areas = widget.findChildren(QtWidgets.QScrollArea)
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QtWidgets.QScrollArea):
            areas.append(parent)
        parent = parent.parentWidget()
    return [
        f"{type(a.widget()).__name__} needs {a.widget().minimumSizeHint().width()} px, has {a.viewport().width()}"
        for a in areas
        if a.isVisible() and a.horizontalScrollBar().maximum() > 0
    ]


@pytest.fixture(scope="module")
def opus_shaped_checkpoint(tmp_path_factory, tiny_tokenizers):
    """6 + 6 layers × 8 heads (OPUS-MT's shape, tiny widths): the largest grids and head boxes."""
    from tests.support import save_tiny

    return save_tiny(
        tmp_path_factory.mktemp("ckpt6x8") / "six-by-eight",
        tiny_tokenizers,
        seed=3,
        d_model=32,
        n_heads=8,
        n_encoder_layers=6,
        n_decoder_layers=6,
    )


@pytest.mark.parametrize("shape", ["4 heads", "6 × 8 heads"])
def test_every_experiment_tab_fits_the_docks_width_without_sideways_scrolling(
    qtbot, tiny_checkpoint, opus_shaped_checkpoint, shape
):
    win = open_window(qtbot, tiny_checkpoint if shape == "4 heads" else opus_shaped_checkpoint, size=(1280, 720))
    type_and_translate(qtbot, win, "비가 와서 우리는 집에 있었어요.")
    tabs = win.live.tabs
    too_wide = {}
    for i in range(tabs.count()):
        tabs.setCurrentIndex(i)  # a tab built on first show is built here
        qtbot.wait(30)
        page = tabs.currentWidget()
        assert page.isVisible()
        if _sideways_scroll(page):
            too_wide[tabs.tabText(i)] = _sideways_scroll(page)
    assert too_wide == {}
    assert tabs.count() >= 7  # force, teacher forcing, beam, heads, ablate, compare, inside, positional …


def test_a_larger_font_at_720p_keeps_every_thumbnail_visible(qtbot, tiny_checkpoint):
    win = open_window(qtbot, tiny_checkpoint, size=(1280, 720))
    type_and_translate(qtbot, win, "비가 와서 우리는 집에 있었어요.")
    grid = win.grid
    assert not grid.compact  # the default font: a title over every thumbnail
    for _ in range(6):  # six presses of Ctrl + (the font goes from 11 to 17 pt)
        win.change_font(+1)
    qtbot.wait(100)
    qtbot.waitUntil(lambda: grid.compact)  # titles no longer fit a column: headers instead
    heights = [v.height() for v in grid.views]
    assert min(heights) >= grid.thumb_min_px() - 1, heights  # none squeezed to nothing
    assert grid.minimumHeight() >= grid.thumb_min_px() * len(grid.views) // grid.n_cols


def _text_lines(label) -> tuple[float, int]:
    """The label's text laid out at its width: (height in px, number of lines)."""

    doc = QtGui.QTextDocument()
    doc.setDefaultFont(label.font())
    doc.setDocumentMargin(0)
    doc.setHtml(label.text())
    doc.setTextWidth(label.contentsRect().width())
    height = doc.size().height()  # lays the document out
    block, lines = doc.begin(), 0
    while block.isValid():
        lines += block.layout().lineCount()
        block = block.next()
    return height, lines


def _text_height(label) -> float:
    return _text_lines(label)[0]


def test_the_translation_lines_are_never_cut_and_the_strip_shrinks_back(qtbot):
    # the shipped model: its short translation carries no warning line (a random model's always do)
    win = open_window(qtbot, SHIPPED, size=(1280, 720))
    for _ in range(4):
        win.change_font(+1)
    type_and_translate(qtbot, win, "비가 와서 우리는 집에 있었어요. 그래서 우리는 영화를 봤어요. 그리고 잤어요.")
    label = win.translation_label
    qtbot.wait(50)
    long_height, n_lines = _text_lines(label)
    per_line = long_height / n_lines
    assert n_lines >= 3  # wrapped beyond the two lines it starts with
    shown = label.height() / per_line
    assert abs(shown - round(shown)) < 0.1 and round(shown) >= 3  # whole lines, more than the first two
    assert label.height() <= 0.2 * win.height() or round(shown) == 3  # the window never grows for it
    assert round(shown) == n_lines or label.toolTip()  # lines left out: the whole text on hover
    assert win.height() == 720
    strip = win.top_dock.height()
    type_and_translate(qtbot, win, "비가 와요.")
    qtbot.waitUntil(lambda: win.top_dock.height() < strip)  # fewer lines: the map gets the room back
    assert label.height() >= _text_height(label) - 1
    qtbot.wait(50)
    dragged = win.top_dock.height() + 80
    win.resizeDocks([win.top_dock], [dragged], QtCore.Qt.Orientation.Vertical)  # as a drag of its edge
    qtbot.waitUntil(lambda: win.top_dock.height() >= dragged - 2)
    do(qtbot, win, lambda: win.controls.set_position(0))  # the lines change again
    qtbot.wait(50)
    assert win.top_dock.height() >= dragged - 2  # the height the user chose stays


def test_present_mode_names_every_row_in_a_smaller_font_rather_than_leaving_some_out(qtbot, tiny_checkpoint):
    from gui.window.present import TICK_MIN_PT
    from gui.window.view_menu import toggle_present

    win = open_window(qtbot, tiny_checkpoint)
    type_and_translate(qtbot, win, "비가 와서 우리는 집에 있었어요.")
    if win.controls.position != 13:
        do(qtbot, win, lambda: win.controls.set_position(13))  # 13 query rows, as in a short sentence
    win.set_view("cross")
    for _ in range(7):  # a large font: 18 + 11 pt in Present
        win.change_font(+1)
    toggle_present(win)
    pw = win.present_window
    pw.showNormal()
    pw.resize(1280, 720)
    for _ in range(3):
        pw.heatmap.grab()
        qtbot.wait(30)
    left = pw.heatmap.plot.getAxis("left")
    rows = pw.heatmap.matrix.shape[0]
    assert [i for _, _, i in left.drawn] == list(range(rows))  # every query row named
    used = left._font().pointSize()
    assert TICK_MIN_PT <= used <= pw.font().pointSize()
    # the colour bar keeps its end labels (0 and 1.0 reach half a line past the bar's ends), inside the view
    bar = pw.heatmap.colorbar.axis
    texts = tick_specs(bar)
    assert {0.0, 1.0} <= {float(text) for _, text in texts}
    view = QtCore.QRectF(pw.heatmap.viewport().rect())
    for rect, _ in texts:
        assert view.contains(pw.heatmap.mapFromScene(bar.mapRectToScene(rect)).boundingRect().toRectF())
    pw.close()


def test_a_tall_grid_at_a_large_font_asks_for_its_height_and_the_central_area_scrolls(qtbot, opus_shaped_checkpoint):
    win = open_window(qtbot, opus_shaped_checkpoint, size=(1280, 720))
    type_and_translate(qtbot, win, "비가 와서 우리는 집에 있었어요.")
    grid = win.grid
    floor_before = grid.minimumHeight()
    for _ in range(6):
        win.change_font(+1)
    qtbot.wait(100)
    needed = grid.ci.layout.effectiveSizeHint(QtCore.Qt.SizeHint.MinimumSize).height()
    assert needed > 6 * grid.thumb_min_px()  # six rows of thumbnails at least one text line each
    assert grid.minimumHeight() >= needed > floor_before  # asked for: more than the font's floor
    assert min(v.height() for v in grid.views) >= grid.thumb_min_px() - 1
    assert win.centralWidget().verticalScrollBar().maximum() > 0  # the window stays 720 high: it scrolls
    assert win.height() == 720


def test_a_cut_wrapped_label_shows_whole_lines_only(qtbot):
    """A WrappedLabel with more lines than it may show (the lecture bar: heading and caption, at most
    three lines) is exactly as tall as its first lines, even in a taller row: no part of the next
    line shows, and the whole text is its tooltip."""
    from PySide6 import QtWidgets

    from gui.widgets.fonts import WrappedLabel

    host = QtWidgets.QWidget()
    qtbot.addWidget(host)
    row = QtWidgets.QHBoxLayout(host)
    label = WrappedLabel(max_lines=3, max_share=0.5)
    label.setTextFormat(QtCore.Qt.TextFormat.RichText)
    tall = QtWidgets.QPushButton("tall")
    tall.setMinimumHeight(400)  # the row is far taller than three lines
    row.addWidget(label, 1)
    row.addWidget(tall)
    host.resize(500, 420)
    host.show()
    text = "<b>Lecture · 1 / 4</b> greedy<br>" + "a caption that wraps " * 30 + "<div><p>a note</p></div>"
    label.setText(text)
    qtbot.wait(30)
    label.setText(text)  # fitted at its laid-out width
    doc = QtGui.QTextDocument()
    doc.setDefaultFont(label.font())
    doc.setDocumentMargin(0)
    doc.setHtml(text)
    doc.setTextWidth(label.contentsRect().width())
    doc.size()  # laid out now
    first = doc.begin().layout()
    assert first.lineCount() >= 3
    third = doc.documentLayout().blockBoundingRect(doc.begin()).top() + first.lineAt(2).y() + first.lineAt(2).height()
    margins = label.contentsMargins()
    assert label.height() == label.minimumHeight() == label.maximumHeight()
    assert abs(label.height() - (third + margins.top() + margins.bottom())) <= 1
    assert "a note" in label.toolTip() and "Lecture · 1 / 4" in label.toolTip()
    label.setText("short")  # no longer cut: no maximum
    assert label.maximumHeight() > 1000 and label.toolTip() == ""


def test_a_wrapped_labels_table_counts_its_rows_not_its_cells(qtbot):
    """Heading, caption and a 3-row note table are five lines: within six, nothing is cut (counting
    each of the table's 27 cells as a line cut it and set a tooltip)."""
    from PySide6 import QtWidgets

    from gui.widgets.fonts import WrappedLabel
    from gui.window.lecture_text import note_html

    host = QtWidgets.QWidget()
    qtbot.addWidget(host)
    row = QtWidgets.QHBoxLayout(host)
    label = WrappedLabel(max_lines=6, max_share=0.9)
    label.setTextFormat(QtCore.Qt.TextFormat.RichText)
    row.addWidget(label)
    host.resize(1200, 800)
    host.show()
    table = "key\tq·k/√d_k\tweight\n" + "\n".join(f"▁t{i}\t{i / 10:.2f}\t{i / 100:.3f}" for i in range(8))
    text = "<b>Lecture · 10 / 17</b><br>A short caption." + note_html(table, across=True)
    label.setText(text)
    qtbot.wait(30)
    label.setText(text)
    assert label.toolTip() == "" and label.maximumHeight() > 1000


def test_the_window_with_its_frame_fits_the_screen():
    from gui.app import fit_to_screen

    assert fit_to_screen((1600, 950), _Screen(1280, 720), frame=(2, 30)) == (1278, 690)  # the title bar counts
    assert fit_to_screen((1000, 600), _Screen(1280, 720), frame=(2, 30)) == (1000, 600)


def test_present_mode_fills_the_screen_with_or_without_a_window_manager(qtbot, window):
    from gui.window.view_menu import toggle_present

    toggle_present(window)
    pw = window.present_window
    qtbot.waitUntil(lambda: pw.isVisible(), timeout=5000)
    assert pw.geometry() == window.screen().geometry()  # not the default 685 x 480 of a bare X server
    pw.close()


SENTENCE_14 = "비가 와서 우리는 집에 있었어요."  # 13 tokens and [EOS] for the tiny tokenizer: 14 source tokens


@pytest.fixture
def settings_file(monkeypatch, tmp_path):
    """The app's remembered settings in a file of the test's own (never the user's)."""
    from gui.window import projector

    path = tmp_path / "settings.ini"
    monkeypatch.setattr(projector, "settings", lambda: QtCore.QSettings(str(path), QtCore.QSettings.Format.IniFormat))
    return path


def _inside_window(widget, rect: QtCore.QRect) -> bool:
    """``rect`` (in ``widget``'s coordinates) lies inside ``widget``'s window and inside the widget itself."""
    win = widget.window()
    return widget.rect().contains(rect) and win.rect().contains(QtCore.QRect(widget.mapTo(win, rect.topLeft()), rect.size()))


def _projected(qtbot, win) -> dict:
    """The enlarged map as drawn now: share of the window's area, labels drawn per axis, whether the
    plot and the colour bar lie inside the window, whether the central area scrolls."""
    hm = win.heatmap
    for _ in range(3):  # the axes lay their labels out when painted
        win.grab()
        qtbot.wait(30)
    plot = hm.mapFromScene(hm.plot.sceneBoundingRect()).boundingRect()
    bar = hm.mapFromScene(hm.colorbar.sceneBoundingRect()).boundingRect()
    scroll = win.centralWidget()
    return {
        "share": hm.width() * hm.height() / (win.width() * win.height()),
        "rows": [i for _, _, i in hm.plot.getAxis("left").drawn],
        "cols": [i for _, _, i in hm.plot.getAxis("bottom").drawn],
        "values": len(hm.values.shown()),
        "row_pt": hm.plot.getAxis("left")._font().pointSize(),
        "plot_inside": _inside_window(hm, plot),
        "bar_inside": hm.colorbar.isVisible() and _inside_window(hm, bar),
        "map_inside": _fully_visible(hm),
        "scrolls": scroll.verticalScrollBar().maximum() > 0 or scroll.horizontalScrollBar().maximum() > 0,
    }


def test_the_projector_layout_at_1280x720_gives_the_map_60_percent_and_labels_every_token_also_after_ctrl_plus(
    qtbot, tiny_checkpoint, settings_file
):
    from gui.window.projector import PROJECTOR_EXTRA, remembered

    win = open_window(qtbot, tiny_checkpoint, size=(1280, 720))
    type_and_translate(qtbot, win, SENTENCE_14)
    if win.controls.position != 14:
        do(qtbot, win, lambda: win.controls.set_position(min(14, win.controls.slider.maximum())))
    win.set_view("cross")
    qtbot.wait(50)
    assert not remembered()
    win.activateWindow()
    qtbot.keyClick(win, QtCore.Qt.Key.Key_F9)  # the layout's key (View → Projector layout)
    assert win.projector.on and win.projector.action.isChecked()
    assert remembered()  # the next start opens in it
    qtbot.wait(100)
    rows, cols = win.heatmap.matrix.shape
    assert cols == 14 and rows >= 13
    for dock in (win.topk_dock, win.tabs_dock, win.masks_dock):
        assert not dock.isVisible()
    assert win.heatmap.font.pointSize() == win.font_size + PROJECTOR_EXTRA  # 16 pt: the rows fit at it
    for presses in (0, 3):
        for _ in range(presses):
            win.change_font(+2)  # Ctrl + (View → Larger font)
        qtbot.wait(100)
        got = _projected(qtbot, win)
        assert (win.width(), win.height()) == (1280, 720), presses  # the window never grows for a font
        assert got["share"] >= 0.6, (presses, got["share"])
        assert got["rows"] == list(range(rows)) and got["cols"] == list(range(cols)), (presses, got)  # none dropped
        assert got["values"] == rows * cols, presses  # each cell's value printed
        assert got["map_inside"] and got["plot_inside"] and got["bar_inside"] and not got["scrolls"], (presses, got)
        assert got["row_pt"] > win.base_font_size, (presses, got)  # larger than the window's first font
    # 17 pt: the window's font; larger, 14 rows would not fit the map's height at 720p
    assert win.font_size == win.base_font_size + 6 and win.heatmap.font.pointSize() == win.font_size
    assert not win.projector.shows["grid"]  # 1280 × 720: the map alone, the grid given up before it
    qtbot.keyClick(win, QtCore.Qt.Key.Key_F9)  # back: the docks and the grid as they were
    qtbot.wait(100)
    assert not win.projector.on and not remembered()
    assert win.topk_dock.isVisible() and win.grid.isVisible() and win.map_tabs.tabBar().isVisible()
    assert win.masks_dock.toggleViewAction().isChecked() and win.masks_dock in win.tabifiedDockWidgets(win.tabs_dock)
    assert win.heatmap.font.pointSize() == win.font_size


def test_on_a_larger_screen_the_projector_layout_keeps_the_grid_beside_the_map(qtbot, tiny_checkpoint, settings_file):
    from gui.window.projector import remembered

    win = open_window(qtbot, tiny_checkpoint, size=(1920, 1080))
    type_and_translate(qtbot, win, SENTENCE_14)
    if win.controls.position != 14:
        do(qtbot, win, lambda: win.controls.set_position(min(14, win.controls.slider.maximum())))
    win.projector.set(True)  # as main.py --projector: not remembered
    assert not remembered() and win.projector.action.isChecked()
    qtbot.wait(100)
    assert win.projector.shows == {"inputs": True, "grid": True}
    assert _fully_visible(win.grid) and _fully_visible(win.inputs.text)
    got = _projected(qtbot, win)
    assert got["share"] >= 0.6 and not got["scrolls"]
    assert win.heatmap.width() > 2 * win.grid.width()  # a compact grid beside the large map
