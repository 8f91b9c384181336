"""Drawing a token axis from cached specs, for axes laid out again at every decoder step.

pyqtgraph's ``AxisItem.paint`` records the line, the ticks and every label's ``drawText`` into a
QPicture and replays it, so each change laid every label out twice, and its generic
``generateDrawSpecs`` walks tick levels and SI prefixes a token axis does not have. Here the line
and one tick per token are computed directly (:meth:`CachedAxisPaint._line_specs`) and upright
labels are drawn as :class:`QtGui.QStaticText` cached per (font, text), so a label keeps its glyph
layout from step to step. ``tests/gui/widgets/test_fast_draw_paths.py`` checks that the ink is pyqtgraph's.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui

_LAID_OUT = QtGui.QPicture()  # an axis's ``picture`` while its cached specs are valid (pyqtgraph resets it to None)


class CachedAxisPaint:
    """Mixin for :class:`gui.widgets.labels.TokenAxis` (before ``pg.AxisItem`` in its bases). The
    axis provides ``tokens()`` (its ``(position, token)`` ticks), ``_font()``, ``angled`` (labels
    drawn at 45° by its ``drawPicture``), ``_static`` (a dict: the glyph cache) and a
    ``generateDrawSpecs`` that calls :meth:`_line_specs`."""

    _specs: tuple | None = None  # what paint() draws (see _prepare)

    def _line_specs(self):
        """The axis line and one tick per token, as pyqtgraph's ``generateDrawSpecs`` computes them
        for one tick level without a grid (``(pen, p1, p2)`` and a list of them), or None where it
        would draw nothing. Raises NotImplementedError for a grid or stopAxisAtTick (use the base)."""
        if self.grid is not False or any(self.style["stopAxisAtTick"]):
            raise NotImplementedError
        bounds = self.mapRectFromParent(self.geometry())
        pt = QtCore.QPointF
        if self.orientation == "left":
            span = (bounds.topRight() + pt(-1, -1), bounds.bottomRight() + pt(-1, 1))
            edge, tick_dir, vertical = bounds.right(), -1, True
        elif self.orientation == "right":
            span = (bounds.topLeft() + pt(1, -1), bounds.bottomLeft() + pt(1, 1))
            edge, tick_dir, vertical = bounds.left(), 1, True
        elif self.orientation == "top":
            span = (bounds.bottomLeft() + pt(-1, -1), bounds.bottomRight() + pt(1, -1))
            edge, tick_dir, vertical = bounds.bottom(), -1, False
        else:
            span = (bounds.topLeft() + pt(-1, 1), bounds.topRight() + pt(1, 1))
            edge, tick_dir, vertical = bounds.top(), 1, False
        ends = [self.mapToDevice(q) for q in span]  # None outside a view (public in every pyqtgraph)
        if None in ends or ends[0] == ends[1]:
            return None
        lo, hi = self.range
        dif = hi - lo
        if dif == 0:
            scale, offset = 1, 0
        elif vertical:
            scale = -bounds.height() / dif
            offset = lo * scale - bounds.height()
        else:
            scale = bounds.width() / dif
            offset = lo * scale
        x_min, x_max = sorted((lo * scale - offset, hi * scale - offset))
        alpha = self.style["tickAlpha"]
        alpha = 255 if alpha is None else min(255, max(0, int(round(alpha * 255)))) if isinstance(alpha, float) else alpha
        pen = self.tickPen()
        if pen.brush().style() == QtCore.Qt.BrushStyle.SolidPattern:
            pen = QtGui.QPen(pen)
            colour = QtGui.QColor(pen.color())
            colour.setAlpha(int(alpha))
            pen.setColor(colour)
        end = edge + self.style["tickLength"] * tick_dir
        ticks = []
        for v, _token in self.tokens():
            x = v * scale - offset
            if x_min <= x <= x_max:
                ticks.append((pen, pt(edge, x), pt(end, x)) if vertical else (pen, pt(x, edge), pt(x, end)))
        return (self.pen(), span[0], span[1]), ticks, []

    def paint(self, p, opt, widget) -> None:
        """As pyqtgraph's, but drawn directly from cached specs: the line and ticks in one call and
        upright labels as cached :class:`QtGui.QStaticText`, so a label keeps its glyph layout
        from step to step (recording and replaying ``drawText`` in a QPicture laid every label out
        twice per change). pyqtgraph sets ``picture`` to None whenever the axis must be laid out
        again; :data:`_LAID_OUT` marks the cached specs valid."""
        if self.picture is None:
            p.save()
            try:
                specs = self.generateDrawSpecs(p)
            finally:
                p.restore()
            self._specs = None if specs is None else self._prepare(specs)
            self.picture = _LAID_OUT
        if self._specs is None:
            return
        angled, (axis_pen, a, b), tick_pen, ticks, texts = self._specs
        p.setRenderHint(p.RenderHint.Antialiasing, False)
        p.setRenderHint(p.RenderHint.TextAntialiasing, True)
        if angled:  # rare (crowded bottom labels): drawn by drawPicture at every paint
            p.save()
            self.drawPicture(p, *texts)
            p.restore()
            return
        p.setPen(axis_pen)
        p.drawLine(a, b)
        if tick_pen is not None:
            p.setPen(tick_pen)
            p.drawLines(ticks)
        else:
            for pen, t1, t2 in ticks:
                p.setPen(pen)
                p.drawLine(t1, t2)
        if texts:
            p.setFont(self._font())
            p.setPen(self.textPen())
            p.setClipRect(self.boundingRect().toAlignedRect())
            for pos, text in texts:
                p.drawStaticText(pos, text)

    def _prepare(self, specs) -> tuple:
        """What :meth:`paint` draws: (angled, axis line spec, tick pen or None, ticks, labels)."""
        axis_spec, tick_specs, text_specs = specs
        if self.angled:
            return True, axis_spec, None, [], specs
        pen = tick_specs[0][0] if tick_specs else None
        if all(t[0] is pen for t in tick_specs):
            ticks = [QtCore.QLineF(t[1], t[2]) for t in tick_specs]
        else:  # pens differ: drawn tick by tick
            pen, ticks = None, tick_specs
        return False, axis_spec, pen, ticks, self._static_texts(self._font(), text_specs)

    def _static_texts(self, font: QtGui.QFont, text_specs) -> list[tuple[QtCore.QPointF, QtGui.QStaticText]]:
        """Top-left position and glyphs of each upright label, placed in its rect as ``drawText``
        with the spec's alignment flags would place it."""
        font_key = font.toString()
        if len(self._static) > 4096:
            self._static.clear()
        align = QtCore.Qt.AlignmentFlag
        out = []
        flags = text_specs[0][1] if text_specs else 0  # one value for every label (see generateDrawSpecs)
        h_align = 1 if flags & align.AlignRight else 0.5 if flags & align.AlignHCenter else 0
        v_align = 1 if flags & align.AlignBottom else 0.5 if flags & align.AlignVCenter else 0
        for rect, _flags, text in text_specs:
            hit = self._static.get((font_key, text))
            if hit is None:
                st = QtGui.QStaticText(text)
                st.setTextFormat(QtCore.Qt.TextFormat.PlainText)
                st.prepare(QtGui.QTransform(), font)
                size = st.size()
                hit = self._static[(font_key, text)] = (st, size.width(), size.height())
            st, w, h = hit
            x = rect.left() + (rect.width() - w) * h_align
            y = rect.top() + (rect.height() - h) * v_align
            out.append((QtCore.QPointF(x, y), st))
        return out
