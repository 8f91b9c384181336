"""Export the layer × head grid for a slide: the grid as on screen (PNG at twice its size, or SVG
with vector cells and text as outlines) below a header that says what it shows — the view
("Cross-attention (decoder → encoder)"), the source sentence, the translation (when there is
one), the step, and the colour scale (a colour bar: fixed [0, 1] or each thumbnail's own
min … max; the mask legend in the Masks view). The header is drawn in the grid's font (the
app's, NanumGothic where registered: Hangul renders). The PNG's text chunks and the SVG's
``<title>``/``<desc>`` say the same, and :attr:`GridHeader.stem` names the file after the view
and step. The grid on screen is never touched.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pyqtgraph.exporters as pgx
from PySide6 import QtCore, QtGui

from gui.export.files import remember
from gui.export.svg import export_svg
from gui.state import view_kinds
from gui.state.view_kinds import view_at, view_title
from gui.widgets.colormap import Colormap
from gui.widgets.map_style import MASKED_RGB, OPEN_RGB

MASKS_TITLE = "Masks the model was given"
FIXED_TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)


@dataclass
class GridHeader:
    """What the exported grid shows (no Qt here): ``kind`` (encoder, decoder, cross, masks),
    ``title`` (the view's name), ``layout`` ("2 layers × 4 heads"), the ``source`` sentence,
    the output line's ``output_label`` and ``output`` ("" when there is none yet), ``step`` of
    ``n_steps`` (None while the output is decoded live: its length is not known yet, as the
    window's step line says) and ``step_text`` (what happened at that step)."""

    kind: str
    title: str
    layout: str
    source: str
    output_label: str
    output: str
    step: int
    n_steps: int | None
    step_text: str

    @property
    def lines(self) -> list[tuple[str, str]]:
        """The header's labelled lines: ``[(label, text)]``."""
        out = [("Source", self.source)]
        if self.output:
            out.append((self.output_label, self.output))
        out.append(("Step", self.step_text))
        return out

    @property
    def counter(self) -> str:
        """ "step 5 / 12", or "step 5 (decoding live)" while the output's length is not known."""
        return f"step {self.step} / {self.n_steps}" if self.n_steps is not None else f"step {self.step} (decoding live)"

    @property
    def heading(self) -> str:
        """The first line: the view, what the grid holds and the step."""
        return f"{self.title} · {self.layout} · {self.counter}"

    @property
    def stem(self) -> str:
        """A file name without extension that names what the file holds: ``attention-grid-cross-step5``."""
        return f"attention-grid-{self.kind}-step{self.step}"

    def description(self, scale_text: str) -> str:
        """Plain text for the file's metadata: every line of the header, and the colour scale."""
        return "\n".join([self.heading] + [f"{label}: {text}" for label, text in self.lines] + [f"Colours: {scale_text}"])


def grid_header(vm) -> GridHeader:
    """The header for the grid a :class:`gui.state.view_model.ViewModel` shows now. Raises
    ValueError before the first result."""
    r = vm.result
    if r is None:
        raise ValueError("no result to describe: translate a sentence first")
    k, kind = vm.step, vm.kind
    if view_kinds.get(kind).is_masks:
        title, layout = MASKS_TITLE, "every mask"
    else:
        n_layers, n_heads = (int(n) for n in view_at(r, k, kind).weights.shape[:2])
        title, layout = view_title(r, kind), f"{n_layers} layers × {n_heads} heads"
    full = vm.full_text()
    if full is not None:
        label, output = ("Reference (teacher forcing)" if vm.teacher_forced else "Translation"), full
    else:
        label, output = f"Output after step {k}", vm.text_at(k)
    step = vm.step_description()
    step = step[len("step ") :] if step.startswith("step ") else step  # the label says "Step:"
    n_steps = None if vm.live and not vm.state.finished else vm.n_steps  # stepped back or not at the end yet
    return GridHeader(kind, title, layout, r.source.text, label, output, k, n_steps, step)


def scale_text(kind: str, scale: str) -> str:
    """The colour bar's caption."""
    if view_kinds.get(kind).is_masks:
        return "mask legend: masked (True) · may attend (False) · hatched: key not computed yet"
    if scale == "per-map":
        return "per-map scale: each thumbnail spans its own min\u00a0…\u00a0max"
    return "attention weight, fixed scale [0,\u00a01] for every thumbnail"


@dataclass
class _Text:
    rect: QtCore.QRectF
    text: str
    font: QtGui.QFont
    colour: str
    flags: int


class HeaderPainter:
    """The header laid out ``width`` px wide in ``font`` for a paint device of ``dpi``: its
    ``height`` (px) and :meth:`paint`. ``cmap`` and ``scale`` ("fixed" or "per-map") are the
    grid's; the Masks view draws the mask legend instead of a colour bar."""

    def __init__(
        self, header: GridHeader, width: float, font: QtGui.QFont, cmap: Colormap, scale: str, dpi: float = 96.0
    ) -> None:
        self.header, self.width, self.cmap, self.scale = header, float(width), cmap, scale
        self.probe = QtGui.QImage(1, 1, QtGui.QImage.Format.Format_ARGB32)  # metrics at the device's dpi
        dpm = round(dpi / 0.0254)
        self.probe.setDotsPerMeterX(dpm)
        self.probe.setDotsPerMeterY(dpm)
        self.body = QtGui.QFont(font)
        if self.body.pointSizeF() <= 0:  # a pixel-sized font
            self.body.setPointSizeF(11)
        self.bold = QtGui.QFont(self.body)
        self.bold.setWeight(QtGui.QFont.Weight.Bold)
        self.title = QtGui.QFont(self.bold)
        self.title.setPointSizeF(self.body.pointSizeF() + 3)
        self.small = QtGui.QFont(self.body)
        self.small.setPointSizeF(max(self.body.pointSizeF() - 1, 6.0))
        self.texts: list[_Text] = []
        self.bar = QtCore.QRectF()
        self.ticks: list[tuple[float, str]] = []
        self.swatches: list[tuple[QtCore.QRectF, str]] = []
        self.rule = 0.0  # the line under the header
        self.height = 0
        self._layout()

    def _metrics(self, font: QtGui.QFont) -> QtGui.QFontMetricsF:
        return QtGui.QFontMetricsF(font, self.probe)

    def _block(self, x: float, y: float, w: float, text: str, font: QtGui.QFont, colour: str) -> float:
        """Add ``text`` wrapped into ``w`` px at (x, y); returns its height."""
        flags = int(QtCore.Qt.AlignmentFlag.AlignLeft | QtCore.Qt.AlignmentFlag.AlignTop) | int(QtCore.Qt.TextFlag.TextWordWrap)
        box = self._metrics(font).boundingRect(QtCore.QRectF(0, 0, max(w, 1.0), 1e6), flags, text)
        h = max(box.height(), self._metrics(font).height())
        self.texts.append(_Text(QtCore.QRectF(x, y, max(w, 1.0), h + 2), text, font, colour, flags))
        return h

    def _layout(self) -> None:
        fm = self._metrics(self.body)
        line, ch = fm.height(), fm.averageCharWidth()
        margin = round(0.8 * line)
        inner = self.width - 2 * margin
        y = margin
        y += self._block(margin, y, inner, self.header.title, self.title, "#111111")
        subtitle = f"{self.header.layout} · {self.header.counter}"
        y += self._block(margin, y, inner, subtitle, self.body, "#555555") + 0.4 * line
        key = "Legend:" if view_kinds.get(self.header.kind).is_masks else "Colours:"
        labels = [f"{label}:" for label, _ in self.header.lines] + [key]
        label_w = max(self._metrics(self.bold).horizontalAdvance(t) for t in labels) + ch
        if label_w > 0.3 * inner:  # a narrow grid: each label above its text
            label_w = 0.0
        for (_, text), tag in zip(self.header.lines, labels):
            if label_w:
                self._block(margin, y, label_w, tag, self.bold, "#555555")
            else:
                y += self._block(margin, y, inner, tag, self.bold, "#555555")
            y += self._block(margin + label_w, y, inner - label_w, text, self.body, "#222222") + 0.25 * line
        if label_w:
            self._block(margin, y, label_w, key, self.bold, "#555555")
        else:
            y += self._block(margin, y, inner, key, self.bold, "#555555")
        left, avail = margin + label_w, inner - label_w
        caption = scale_text(self.header.kind, self.scale)
        if view_kinds.get(self.header.kind).is_masks:
            self._legend(left, y, avail, line, ch)
            self.rule = self.texts[-1].rect.bottom() + 0.5 * line
            self.height = math.ceil(self.rule + 0.6 * line)
            return
        bar_w = min(max(14 * ch, 0.45 * avail), 32 * ch, avail - ch)
        bar_h = 0.8 * line
        self.bar = QtCore.QRectF(left + ch, y + (line - bar_h) / 2, bar_w - ch, bar_h)
        sm = self._metrics(self.small)
        wanted = [(0.0, "0"), (1.0, "1"), (0.5, "0.5"), (0.25, "0.25"), (0.75, "0.75")]
        if self.scale == "per-map":
            wanted = [(0.0, "min"), (1.0, "max")]
        boxes: list[QtCore.QRectF] = []
        for v, text in wanted:  # the ends first; a tick label that would touch another is left out
            tw = sm.horizontalAdvance(text) + 2
            box = QtCore.QRectF(self.bar.left() + v * self.bar.width() - tw / 2, self.bar.bottom() + 3, tw, sm.height())
            if any(box.adjusted(-ch, 0, ch, 0).intersects(o) for o in boxes):
                continue
            boxes.append(box)
            self.ticks.append((v, text))
            self.texts.append(_Text(box, text, self.small, "#333333", int(QtCore.Qt.AlignmentFlag.AlignHCenter)))
        under = self.bar.bottom() + 4 + sm.height()
        cap_x = self.bar.right() + 1.5 * ch
        if margin + inner - cap_x >= 18 * ch:  # the caption beside the bar, else under it
            y = max(under, y + self._block(cap_x, y, margin + inner - cap_x, caption, self.body, "#222222"))
        else:
            y = under + 0.2 * line
            y += self._block(left, y, avail, caption, self.body, "#222222")
        self.rule = y + 0.5 * line
        self.height = math.ceil(self.rule + 0.6 * line)

    def _legend(self, x0: float, y: float, avail: float, line: float, ch: float) -> None:
        """The Masks view's legend (as the mask panel draws it): two colours and the hatch."""
        size, x = 0.9 * line, x0
        for colour, text in ((OPEN_RGB, "may attend (False)"), (MASKED_RGB, "masked (True)"), (None, "key not computed yet")):
            tw = self._metrics(self.body).horizontalAdvance(text) + 4
            if x + size + ch + tw > x0 + avail and x > x0:
                x, y = x0, y + 1.3 * line
            self.swatches.append(
                (QtCore.QRectF(x, y + (line - size) / 2, size, size), "hatch" if colour is None else QtGui.QColor(*colour).name())
            )
            self._block(x + size + 0.5 * ch, y, tw, text, self.body, "#222222")
            x += size + ch + tw + 1.5 * ch

    def paint(self, painter: QtGui.QPainter) -> None:
        """Draw the header in px from (0, 0) (the caller scales the painter for a larger image)."""
        painter.save()
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, True)
        painter.setRenderHint(QtGui.QPainter.RenderHint.TextAntialiasing, True)
        painter.fillRect(QtCore.QRectF(0, 0, self.width, self.height), QtGui.QColor("white"))
        for t in self.texts:
            painter.setFont(t.font)
            painter.setPen(QtGui.QColor(t.colour))
            painter.drawText(t.rect, t.flags, t.text)
        if not self.bar.isNull():
            gradient = QtGui.QLinearGradient(self.bar.topLeft(), self.bar.topRight())
            for i in range(33):
                pos = i / 32
                gradient.setColorAt(pos, self.cmap.qcolor(pos))
            painter.fillRect(self.bar, QtGui.QBrush(gradient))
            painter.setPen(QtGui.QPen(QtGui.QColor("#666666"), 0))
            painter.setBrush(QtCore.Qt.BrushStyle.NoBrush)
            painter.drawRect(self.bar)
            for v, _ in self.ticks:
                x = self.bar.left() + v * self.bar.width()
                painter.drawLine(QtCore.QPointF(x, self.bar.bottom()), QtCore.QPointF(x, self.bar.bottom() + 3))
        for rect, colour in self.swatches:
            if colour == "hatch":  # the mask panel's "not computed yet": grey with dark diagonals
                painter.fillRect(rect, QtGui.QColor(215, 215, 215))
                painter.setPen(QtGui.QPen(QtGui.QColor(120, 120, 120), 1))
                side = rect.width()
                for i in range(-2, 3):  # lines x + y = const, cut to the square (no clip: SVG keeps it)
                    t = i * side / 3
                    u0, u1 = max(0.0, -t), min(side, side - t)
                    painter.drawLine(
                        QtCore.QPointF(rect.left() + t + u0, rect.bottom() - u0),
                        QtCore.QPointF(rect.left() + t + u1, rect.bottom() - u1),
                    )
            else:
                painter.fillRect(rect, QtGui.QColor(colour))
            painter.setPen(QtGui.QPen(QtGui.QColor("#666666"), 0))
            painter.setBrush(QtCore.Qt.BrushStyle.NoBrush)
            painter.drawRect(rect)
        painter.setPen(QtGui.QPen(QtGui.QColor("#c8c8c8"), 1))
        painter.drawLine(QtCore.QPointF(0, self.rule), QtCore.QPointF(self.width, self.rule))
        painter.restore()


@dataclass
class GridExport:
    """One written grid file: ``size`` px (PNG) or SVG px, ``header_height`` in the same units
    (the grid starts below it), and ``note`` for the status bar."""

    path: Path
    size: tuple[int, int]
    header_height: int
    note: str


def export_grid(path: str | Path, grid, header: GridHeader, fmt: str = "png", scale: int = 2) -> GridExport:
    """Write the head grid widget ``grid`` (:class:`gui.widgets.head_grid.HeadGrid`) with
    ``header`` above it as PNG (``scale`` times its size) or SVG (``fmt="svg"``: vector cells,
    text as outlines). Raises OSError when the file cannot be written, ValueError for another ``fmt``."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"unknown grid export format {fmt!r}; choose png or svg")
    path = Path(path)
    if path.suffix.lower() != f".{fmt}":
        path = path.with_suffix(f".{fmt}")
    caption = scale_text(header.kind, grid.scale)
    title, description = header.heading, header.description(caption)
    dpi = grid.logicalDpiX()
    if fmt == "svg":
        hp = HeaderPainter(header, grid.width(), grid.font, grid.cmap, grid.scale, dpi)
        out, size = export_svg(path, grid, hp.height, hp.paint, title, description)
        remember(out)
        return GridExport(out, size, hp.height, _note(header, grid.scale))
    width = max(int(grid.ci.boundingRect().width()), 1)
    exporter = pgx.ImageExporter(grid.ci)
    exporter.parameters()["width"] = width * scale
    body = exporter.export(toBytes=True)
    s = body.width() / width
    hp = HeaderPainter(header, width, grid.font, grid.cmap, grid.scale, dpi)
    top = math.ceil(hp.height * s)
    image = QtGui.QImage(body.width(), top + body.height(), QtGui.QImage.Format.Format_ARGB32)
    dpm = round(dpi / 0.0254)
    image.setDotsPerMeterX(dpm)
    image.setDotsPerMeterY(dpm)
    image.fill(QtGui.QColor("white"))
    painter = QtGui.QPainter(image)
    try:
        painter.scale(s, s)
        hp.paint(painter)
        painter.resetTransform()
        painter.drawImage(0, top, body)
    finally:
        painter.end()
    image.setText("Title", title)
    image.setText("Description", description)
    image.setText("Software", "Attention Studio")
    if not image.save(str(path), "PNG"):
        raise OSError(f"{path}: could not write the PNG")
    remember(path)
    return GridExport(path, (image.width(), image.height()), top, _note(header, grid.scale))


def _note(header: GridHeader, scale: str) -> str:
    colour_bar = f"colour bar {'per map' if scale == 'per-map' else 'fixed [0, 1]'}"
    bar = "mask legend" if view_kinds.get(header.kind).is_masks else colour_bar
    return f"; header: {header.title}, sentence, step {header.step}, {bar}"
