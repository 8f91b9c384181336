"""SVG export with every text drawn as outlines (paths), so Hangul shows in any viewer without
the bundled font, every heatmap drawn as vector cells, and with the painter's resolution set to
the widget's (Qt's default of 72 dpi drew the images 1.33× larger than their axes).

Qt's SVG generator writes text as ``<text font-family=…>``; each such element is replaced by the
glyph outlines ``QPainterPath.addText`` gives for the same font, size, position and colour.

It writes an image item as the image itself: a heatmap became a bitmap of one pixel per cell
(12 × 10 pixels for a 10 × 12 map) that librsvg and browsers stretch with smoothing, so the cells
melted into blobs. Each heatmap (:class:`gui.widgets.matrix_image.MatrixImage`: the enlarged map, every
thumbnail of the grid) is drawn instead as one ``<rect>`` per cell (:func:`cells_svg`) in the
colours the screen shows (read from the image item's own rendering: the colour map, the levels,
fixed or per-map, and any pooling are the screen's), with ``shape-rendering="crispEdges"``; each
cell reaches a little under the neighbours drawn after it, so a viewer that anti-aliases anyway
shows no hairline seams. Masked cells keep the screen's hatch, as its image with every pixel
repeated (so even a viewer that smooths images keeps the edges sharp). Token labels, titles, cell
values and the colour bar are drawn as before. :func:`svg_document` can also paint a band above
the widget (the grid's header: :mod:`gui.export.grid_image`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtGui, QtSvg, QtWidgets

from gui.widgets.matrix_image import MatrixImage

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
    return (
        f'<path fill="{attrs.get("fill", "#000000")}" fill-opacity="{attrs.get("fill-opacity", "1")}" '
        f'stroke="none" fill-rule="{rule}" d="{path_data(glyphs)}"/>'
    )


def outline_text(svg: str) -> str:
    """``svg`` with every ``<text>`` element replaced by the glyph outlines it would draw."""
    return _TEXT.sub(_outline, svg)


_MARKER = re.compile(r'<g fill="#(01[0-9a-f]{4})"[^>]*?\stransform="matrix\(([^)]*)\)"[^>]*>\s*<rect\b[^>]*/>\s*</g>')
_PROFILE = 'version="1.2" baseProfile="tiny"'  # Qt's root element; class and style are SVG 1.1


@dataclass
class CellPicture:
    """What one heatmap draws: ``rgba [rows, cols, 4]`` (uint8, each cell's colour on screen)
    and, where cells are masked, the screen's hatch overlay ``hatch [rows·h, cols·h, 4]`` (RGBA,
    transparent on the cells that are not masked; :func:`gui.widgets.map_style.mask_overlay`)."""

    rgba: np.ndarray
    hatch: np.ndarray | None = None


def matrix_images(widget) -> list[MatrixImage]:
    """The heatmaps ``widget`` draws: the enlarged map's (``matrix_image``) or the grid's thumbnails (``images``)."""
    one = getattr(widget, "matrix_image", None)
    found = [one] if one is not None else list(getattr(widget, "images", []))
    return [m for m in found if isinstance(m, MatrixImage)]


def qimage_rgba(image: QtGui.QImage) -> np.ndarray:
    """``image`` as a ``[height, width, 4]`` uint8 RGBA array (a copy)."""
    img = image.convertToFormat(QtGui.QImage.Format.Format_RGBA8888)
    raw = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine())
    return raw[:, : img.width() * 4].reshape(img.height(), img.width(), 4).copy()


def cell_picture(m: MatrixImage) -> CellPicture | None:
    """The cells ``m`` shows now (None when it shows none). The colours are those of the image
    item's own rendering (colour map, levels, pooled cells: exactly the screen's)."""
    item = m.image
    if item.image is None or np.asarray(item.image).size == 0 or not item.isVisible():
        return None
    item.render()  # what paint() draws: pyqtgraph's LUT lookup at the item's levels
    if item.qimage is None:
        return None
    hatch = None if m.hatch is None else np.asarray(m.hatch)
    if hatch is not None and (hatch.ndim != 3 or hatch.shape[2] != 4 or hatch.dtype != np.uint8):
        hatch = None
    return CellPicture(qimage_rgba(item.qimage), None if hatch is None else hatch.copy())


def _num(v: float) -> str:
    return f"{v:.5f}".rstrip("0").rstrip(".") or "0"


def _fill(rgba) -> str:
    r, g, b, a = (int(v) for v in rgba)
    return f'fill="#{r:02x}{g:02x}{b:02x}"' + ("" if a == 255 else f' fill-opacity="{_num(a / 255)}"')


def _png_base64(rgba: np.ndarray, times: int) -> str:
    """``rgba`` as a base64 PNG, each pixel repeated ``times`` × ``times`` (nearest neighbour)."""
    big = np.ascontiguousarray(np.repeat(np.repeat(rgba, times, 0), times, 1))
    image = QtGui.QImage(big.data, big.shape[1], big.shape[0], big.shape[1] * 4, QtGui.QImage.Format.Format_RGBA8888)
    data = QtCore.QByteArray()
    buffer = QtCore.QBuffer(data)
    buffer.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(data.toBase64()).decode("ascii")


# Browsers smooth an image marked optimizeSpeed; this rule, which Qt's SVG renderer skips (it
# would smooth an image marked pixelated), asks them for nearest-neighbour instead.
PIXELATED = (
    '<style type="text/css">@supports (image-rendering: pixelated) { .masked-hatch { image-rendering: pixelated } }</style>'
)
HATCH_PX = 0.5  # at most this many SVG px per pixel of the embedded hatch (sharp at 2x)
HATCH_MAX_PIXELS = 4_000_000  # the hatch image's limit after repeating its pixels


def cells_svg(pic: CellPicture, matrix: str) -> str:
    """``pic`` as SVG: a group with ``transform="matrix(…)"`` (cell units to px: what Qt used
    for the image) holding one ``<rect>`` per cell, row by row (x = column, y = row), then the
    hatch of the masked cells as the screen draws it: its image, each pixel repeated so that
    one is at most :data:`HATCH_PX` px (viewers that smooth images blur no cell edge), marked
    ``image-rendering`` optimizeSpeed (Qt draws it unsmoothed, as on screen) and, through
    :data:`PIXELATED`, pixelated for browsers."""
    a, _, _, d, _, _ = (float(v) for v in re.split(r"[,\s]+", matrix.strip()))
    rows, cols = pic.rgba.shape[:2]
    # each cell reaches under the neighbours drawn after it: no background seam where a viewer
    # anti-aliases the shared edge anyway; never visible, as they cover it
    ox = min(0.5 / abs(a), 0.25) if a else 0.0
    oy = min(0.5 / abs(d), 0.25) if d else 0.0
    widths = [_num(1 + ox)] * (cols - 1) + ["1"]
    heights = [_num(1 + oy)] * (rows - 1) + ["1"]
    out = [
        f"<!-- heatmap: {rows} rows × {cols} columns, one rect per cell (x = column, y = row) -->",
        f'<g class="heatmap-cells" transform="matrix({matrix})" stroke="none" shape-rendering="crispEdges">',
    ]
    fills: dict[bytes, str] = {}
    for r in range(rows):
        for c in range(cols):
            key = pic.rgba[r, c].tobytes()
            fill = fills.get(key) or fills.setdefault(key, _fill(pic.rgba[r, c]))
            out.append(f'<rect x="{c}" y="{r}" width="{widths[c]}" height="{heights[r]}" {fill}/>')
    if pic.hatch is not None:
        h, w = pic.hatch.shape[:2]
        per_px = max(abs(a) * cols / w, abs(d) * rows / h)  # SVG px per hatch pixel
        times = max(1, min(int(np.ceil(per_px / HATCH_PX)), int((HATCH_MAX_PIXELS / (h * w)) ** 0.5)))
        out.append(
            f'<image class="masked-hatch" x="0" y="0" width="{cols}" height="{rows}" preserveAspectRatio="none" '
            'image-rendering="optimizeSpeed" '
            f'xlink:href="data:image/png;base64,{_png_base64(pic.hatch, times)}"/>'
        )
    out.append("</g>")
    return "\n".join(out)


@contextmanager
def marked_cells(widget) -> Iterator[dict[str, CellPicture]]:
    """While open, every heatmap of ``widget`` is hidden (image and hatch overlay) and a plain
    rectangle of a unique fill (``#01xxxx``) is drawn in its place, at its position in the
    drawing order: Qt's SVG then holds one marker group per heatmap, with the transform the image
    had. Yields ``{fill without '#': the cells}``; restores the widget on leaving."""
    pictures: dict[str, CellPicture] = {}
    placed: list[tuple[QtWidgets.QGraphicsRectItem, list[tuple[QtWidgets.QGraphicsItem, bool]]]] = []
    try:
        for m in matrix_images(widget):
            pic = cell_picture(m)
            if pic is None:
                continue
            fill = f"01{len(pictures) + 1:04x}"
            rows, cols = pic.rgba.shape[:2]
            marker = QtWidgets.QGraphicsRectItem(QtCore.QRectF(0, 0, cols, rows), m.image.parentItem())
            bounds = m.image.boundingRect()  # [0, cols] × [0, rows], or [0, 1]² for a thumbnail's UnitImage
            marker.setTransform(QtGui.QTransform.fromScale(bounds.width() / cols, bounds.height() / rows) * m.image.transform())
            marker.setPos(m.image.pos())
            marker.setZValue(m.image.zValue())
            marker.setPen(QtGui.QPen(QtCore.Qt.PenStyle.NoPen))
            marker.setBrush(QtGui.QColor(f"#{fill}"))
            marker.stackBefore(m.image)  # drawn where the image was: under the cell values
            placed.append((marker, [(item, item.isVisible()) for item in m.items()]))
            for item in m.items():
                item.hide()
            pictures[fill] = pic
        yield pictures
    finally:
        for marker, shown in placed:
            scene = marker.scene()
            marker.setParentItem(None)
            if scene is not None:
                scene.removeItem(marker)
            for item, visible in shown:
                item.setVisible(visible)


def svg_document(
    widget,
    top: int = 0,
    paint_top: Callable[[QtGui.QPainter], None] | None = None,
    title: str = "Attention Studio export",
    description: str = "",
    vector: bool = True,
) -> tuple[str, QtCore.QSize]:
    """The SVG text of ``widget`` at its on-screen size, ``top`` px lower than a band that
    ``paint_top`` paints (a header), text as outlines and, with ``vector``, every heatmap as
    vector cells (:func:`cells_svg`). Returns the text and its size in px."""
    size = QtCore.QSize(widget.width(), widget.height() + top)
    buffer = QtCore.QBuffer()
    buffer.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    gen = QtSvg.QSvgGenerator()
    gen.setOutputDevice(buffer)
    gen.setSize(size)
    gen.setViewBox(QtCore.QRect(0, 0, size.width(), size.height()))
    gen.setResolution(widget.logicalDpiX())
    gen.setTitle(title)  # Qt escapes both
    if description:
        gen.setDescription(description)
    with marked_cells(widget) if vector else _nothing() as pictures:
        painter = QtGui.QPainter(gen)
        try:
            if paint_top is not None:
                paint_top(painter)
            if isinstance(widget, QtWidgets.QGraphicsView):  # its render() draws the scene into a target rectangle
                view = widget.viewport().rect()
                widget.render(painter, QtCore.QRectF(view.translated(0, top)), view)
            else:
                widget.render(painter, QtCore.QPoint(0, top))
        finally:
            painter.end()
    svg = bytes(buffer.data()).decode("utf-8")
    done: list[str] = []

    def cells(match: re.Match) -> str:
        done.append(match.group(1))
        return cells_svg(pictures[match.group(1)], match.group(2))

    if pictures:
        svg = _MARKER.sub(lambda mt: cells(mt) if mt.group(1) in pictures else mt.group(0), svg)
        if sorted(done) != sorted(pictures):  # a marker Qt wrote otherwise: the images as they were
            return svg_document(widget, top, paint_top, title, description, vector=False)
        svg = svg.replace(_PROFILE, 'version="1.1"', 1)
        if 'class="masked-hatch"' in svg:
            svg = svg.replace("<defs>", PIXELATED + "\n<defs>", 1)
    return outline_text(svg), size


@contextmanager
def _nothing() -> Iterator[dict[str, CellPicture]]:
    yield {}


def export_svg(
    path: str | Path,
    widget,
    top: int = 0,
    paint_top: Callable[[QtGui.QPainter], None] | None = None,
    title: str = "Attention Studio export",
    description: str = "",
) -> tuple[Path, tuple[int, int]]:
    """Write ``widget`` (the enlarged map or the grid) as SVG at its on-screen size, text as
    outlines, heatmaps as vector cells (one ``<rect>`` each), below a ``top`` px band painted by
    ``paint_top`` (a header; see :func:`svg_document`). Returns the path and its size in px.
    Raises OSError when it cannot be written."""
    path = Path(path)
    if path.suffix.lower() != ".svg":
        path = path.with_suffix(".svg")
    svg, size = svg_document(widget, top, paint_top, title, description)
    path.write_text(svg, encoding="utf-8")
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
