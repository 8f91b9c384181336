"""SVG export with every text drawn as outlines (paths), so Hangul shows in any viewer without
the bundled font, and with the painter's resolution set to the widget's (Qt's default of
72 dpi drew the images 1.33× larger than their axes).

Qt's SVG generator writes text as ``<text font-family=…>``; each such element is replaced by the
glyph outlines ``QPainterPath.addText`` gives for the same font, size, position and colour.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from PySide6 import QtCore, QtGui, QtSvg

_TEXT = re.compile(r"<text\b([^>]*)>(.*?)</text>", re.S)
_ATTR = re.compile(r'([\w:-]+)="([^"]*)"')


def path_data(path: QtGui.QPainterPath) -> str:
    """SVG path data ("M … L … C … Z") of a QPainterPath."""
    out: list[str] = []
    i, n = 0, path.elementCount()
    kinds = QtGui.QPainterPath.ElementType
    while i < n:
        e = path.elementAt(i)
        if e.type == kinds.MoveToElement:
            if out:
                out.append("Z")
            out.append(f"M{e.x:.2f} {e.y:.2f}")
            i += 1
        elif e.type == kinds.LineToElement:
            out.append(f"L{e.x:.2f} {e.y:.2f}")
            i += 1
        else:  # CurveToElement followed by two CurveToDataElements
            c1, c2 = path.elementAt(i + 1), path.elementAt(i + 2)
            out.append(f"C{e.x:.2f} {e.y:.2f} {c1.x:.2f} {c1.y:.2f} {c2.x:.2f} {c2.y:.2f}")
            i += 3
    if out:
        out.append("Z")
    return " ".join(out)


def _outline(match: re.Match) -> str:
    attrs = dict(_ATTR.findall(match.group(1)))
    text = html.unescape(re.sub(r"<[^>]+>", "", match.group(2)))
    if not text.strip():
        return ""
    font = QtGui.QFont(attrs.get("font-family", ""))
    font.setPointSizeF(float(attrs.get("font-size", "12")) * 0.75)  # px at 96 dpi -> pt
    font.setWeight(QtGui.QFont.Weight(int(float(attrs.get("font-weight", "400")))))
    font.setItalic(attrs.get("font-style") == "italic")
    glyphs = QtGui.QPainterPath()
    glyphs.addText(QtCore.QPointF(float(attrs.get("x", "0")), float(attrs.get("y", "0"))), font, text)
    rule = "evenodd" if glyphs.fillRule() == QtCore.Qt.FillRule.OddEvenFill else "nonzero"
    return (f'<path fill="{attrs.get("fill", "#000000")}" fill-opacity="{attrs.get("fill-opacity", "1")}" '
            f'stroke="none" fill-rule="{rule}" d="{path_data(glyphs)}"/>')


def outline_text(svg: str) -> str:
    """``svg`` with every ``<text>`` element replaced by the glyph outlines it would draw."""
    return _TEXT.sub(_outline, svg)


def export_svg(path: str | Path, widget) -> tuple[Path, tuple[int, int]]:
    """Write ``widget`` (the enlarged map or the grid) as SVG at its on-screen size, text as
    outlines. Returns the path and its size in px. Raises OSError when it cannot be written."""
    path = Path(path)
    if path.suffix.lower() != ".svg":
        path = path.with_suffix(".svg")
    size = widget.size()
    buffer = QtCore.QBuffer()
    buffer.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    gen = QtSvg.QSvgGenerator()
    gen.setOutputDevice(buffer)
    gen.setSize(size)
    gen.setViewBox(QtCore.QRect(0, 0, size.width(), size.height()))
    gen.setResolution(widget.logicalDpiX())
    gen.setTitle("Attention Studio export")
    painter = QtGui.QPainter(gen)
    try:
        widget.render(painter)
    finally:
        painter.end()
    svg = bytes(buffer.data()).decode("utf-8")
    path.write_text(outline_text(svg), encoding="utf-8")
    return path, (size.width(), size.height())


def rasterize_svg(path: str | Path, width: int, height: int) -> QtGui.QImage:
    """Render an SVG file to a white ``width × height`` image (for comparing with the PNG)."""
    image = QtGui.QImage(width, height, QtGui.QImage.Format.Format_ARGB32)
    image.fill(QtGui.QColor("white"))
    painter = QtGui.QPainter(image)
    try:
        QtSvg.QSvgRenderer(str(path)).render(painter)
    finally:
        painter.end()
    return image


def render_png(widget, width: int, height: int) -> QtGui.QImage:
    """Render ``widget`` into a white ``width × height`` image with the same painter path the SVG
    takes (``widget.render``), scaled to fit."""
    image = QtGui.QImage(width, height, QtGui.QImage.Format.Format_ARGB32)
    image.fill(QtGui.QColor("white"))
    painter = QtGui.QPainter(image)
    try:
        painter.scale(width / widget.width(), height / widget.height())
        widget.render(painter)
    finally:
        painter.end()
    return image
