"""File → Export head grid (PNG, SVG) puts a header above the grid: the view, the source sentence,
the translation, the step and the colour scale, in the app's Hangul font; the file name and the
file's own title and description say what it holds."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
from PySide6 import QtGui, QtWidgets

from gui.widgets.colormap import as_pg
from gui.window import view_menu as display
from tests.gui.export.test_map_svg_cells import _CELLS, _RECT, RSVG, ZOOM, _rasterise, _rgb
from tests.support.gui import TEXT, type_and_translate


def _answer_dialog(monkeypatch, folder: Path) -> list[str]:
    """File dialogs answer with the proposed name in ``folder``; returns the proposed paths."""
    asked: list[str] = []

    def dialog(parent, caption, proposed, filt):
        asked.append(proposed)
        return str(folder / Path(proposed).name), filt

    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", dialog)
    return asked


def test_grid_png_has_a_header_that_says_what_it_shows(qtbot, window, tmp_path, monkeypatch):
    type_and_translate(qtbot, window)
    window.set_view("cross")
    qtbot.wait(50)
    asked = _answer_dialog(monkeypatch, tmp_path)
    k, grid = window.vm.step, window.grid
    path = display.export_dialog(window, "grid")
    assert Path(asked[0]).name == path.name == f"attention-grid-cross-step{k}.png"  # the name says what it holds
    img = QtGui.QImage(str(path))
    assert img.width() == 2 * int(grid.ci.boundingRect().width())
    line = QtGui.QFontMetricsF(grid.font).height()
    header = img.height() - 2 * grid.height()
    assert header >= 2 * 6 * line  # 2x: title, subtitle, sentence, translation, step, colour bar
    top = _rgb(img)[: img.height() - 2 * int(grid.ci.boundingRect().height())]
    assert (top.min(-1) < 128).mean() > 0.01  # text and the colour bar: not blank
    cmap = grid.cmap
    for end in (0.0, 1.0):  # the colour bar runs from the colour map's first to its last colour
        colour = np.array(as_pg(cmap).map(end, mode="byte")[:3], dtype=int)
        assert (np.abs(top - colour).max(-1) <= 12).sum() >= 4, end
    title, description = img.text("Title"), img.text("Description")
    assert title.startswith("Cross-attention (decoder → encoder) · 2 layers × 4 heads") and f"step {k} /" in title
    assert f"Source: {TEXT}" in description and f"Translation: {window.vm.full_text()}" in description
    assert "fixed scale [0,\u00a01]" in description
    assert all(QtGui.QFontMetricsF(grid.font).inFontUcs4(ord(ch)) for ch in TEXT)  # Hangul: no boxes
    assert "header: Cross-attention (decoder → encoder)" in window.status.currentMessage()
    # the Masks view: its legend in place of the colour bar
    window.set_view("masks")
    qtbot.wait(50)
    path = display.export_dialog(window, "grid")
    assert path.name == f"attention-grid-masks-step{k}.png"
    masks = QtGui.QImage(str(path))
    assert masks.text("Title").startswith("Masks the model was given") and "mask legend" in masks.text("Description")
    assert masks.height() > 2 * grid.height()


def test_grid_svg_has_the_header_and_vector_thumbnails(qtbot, window, tmp_path, monkeypatch):
    type_and_translate(qtbot, window)
    window.set_view("encoder")
    display.set_scale(window, "per-map")
    qtbot.wait(50)
    _answer_dialog(monkeypatch, tmp_path)
    grid = window.grid
    path = display.export_dialog(window, "grid", "svg")
    assert path.name == f"attention-grid-encoder-step{window.vm.step}.svg"
    svg = path.read_text(encoding="utf-8")
    root = ET.fromstring(svg.encode("utf-8"))
    ns = "{http://www.w3.org/2000/svg}"
    assert root.find(f"{ns}title").text.startswith("Encoder self-attention · 2 layers × 4 heads")
    desc = root.find(f"{ns}desc").text
    assert f"Source: {TEXT}" in desc and "per-map scale" in desc
    width, height = (float(v) for v in root.get("viewBox").split()[2:])
    assert width == grid.width() and height > grid.height() + 5 * QtGui.QFontMetricsF(grid.font).height()
    assert "<text" not in svg  # the header's Hangul as outlines too
    groups = _CELLS.findall(svg)
    shown = [im for im in grid.images if im.shape[0] and im.shape[1]]
    assert len(groups) == len(shown) and "<image" not in svg  # no thumbnail as a bitmap
    for (_, body), im in zip(groups, shown):
        assert len(_RECT.findall(body)) == im.shape[0] * im.shape[1]
    if RSVG is not None:
        px = _rasterise(path)
        head = px[: ZOOM * int(height - grid.height())]
        assert (head.min(-1) < 128).mean() > 0.01


def test_grid_header_of_a_beam_result_stepped_back_does_not_claim_the_last_step(qtbot, window, tmp_path, monkeypatch):
    """A beam-4 result run to the end, then three steps back: the header said "step k / k" (the
    steps decoded so far, as if k were the last) where the window says the output is being
    decoded live; at the end it gives the whole length."""
    from tests.support.gui import do

    window.inputs.text.setText(TEXT)
    window.inputs.beam.setValue(4)
    window.inputs.decoding.setCurrentIndex(1)  # beam search
    do(qtbot, window, window.translate)
    do(qtbot, window, window.controls.end_button.click)
    r = window.vm.result
    n = len(r.steps)
    assert r.mode == "beam" and r.beam == 4 and n >= 4 and window.vm.state.finished
    _answer_dialog(monkeypatch, tmp_path)
    window.set_view("cross")
    title = QtGui.QImage(str(display.export_dialog(window, "grid"))).text("Title")
    assert title.endswith(f"· step {n} / {n}")
    k = n - 3
    do(qtbot, window, lambda: window.controls.set_position(k))
    assert window.vm.step == k and window.step_label.text().startswith(f"step {k} (decoding live)")
    image = QtGui.QImage(str(display.export_dialog(window, "grid")))
    assert image.text("Title").endswith(f"· step {k} (decoding live)")  # was "step {k} / {k}"
    assert f"Step: {k} (decoding live)" in image.text("Description")  # the same as the header's step line
