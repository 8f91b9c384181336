"""Token axes that never overlap: labels are elided to a maximum width, thinned to a regular
stride that keeps the first and the last token, and kept inside the axis (never dropped at the
edges). Crowded bottom labels are staggered on two lines or, when that still drops labels,
angled at 45° (never turned on their side: Hangul reads upright). Hovering a label shows the
full token. ``TokenAxis.drawn`` holds what was drawn, for tests.
"""

from __future__ import annotations

import weakref

import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from gui.widgets.axis_paint import CachedAxisPaint

GAP = 3.0  # pixels between neighbouring labels
SIN45 = 0.7071067811865476
MAX_CHARS = 12  # labels longer than about this many average characters are elided ("…")
TITLE_NUDGE = 5  # px pyqtgraph moves an axis title outwards, past the axis's own edge (AxisItem.resizeEvent)


def thin(extents: list[tuple[float, float]], gap: float = GAP, lines: int = 1) -> list[int]:
    """Indices of labels to draw, given each label's ``(start, end)`` along the axis (ascending).

    Chooses the smallest regular stride at which labels on the same line are at least ``gap``
    apart (``lines`` = 2: the kept labels alternate between two lines, so a label only has to
    clear the one two places on); the last label replaces the stride's final one when both would
    not fit. Never overlapping; the first label is always kept."""
    n = len(extents)
    if n == 0:
        return []

    def fits(idx: list[int]) -> bool:
        return all(extents[a][1] + gap <= extents[b][0] for a, b in zip(idx, idx[lines:]))

    for stride in range(1, n + 1):
        idx = list(range(0, n, stride))
        if idx[-1] != n - 1:
            with_last = idx + [n - 1]
            idx = with_last if fits(with_last) else idx[:-1] + [n - 1] if len(idx) > 1 else idx
        if fits(idx):
            return idx
    return [0]


_INK: dict[tuple[str, str, float], float] = {}  # (font, text, box height) -> ink centre below the box's top


def ink_centre(font: QtGui.QFont, text: str, line: float) -> float:
    """Where the ink of ``text`` drawn vertically centred in a box ``line`` px high is centred, in
    px from the box's top (painted once per font and text: ``tightBoundingRect`` is not tight for
    every glyph, e.g. it takes an apostrophe down to the baseline)."""
    key = (font.toString(), text, float(line))
    hit = _INK.get(key)
    if hit is None:
        if len(_INK) > 4096:
            _INK.clear()
        # unclipped, with room above and below the box: in a row lower than the font's line the ink of a
        # tall label such as "[BOS]" reaches past the box, and a clipped measure would put it off-centre
        pad = int(QtGui.QFontMetricsF(font).height()) + 2
        size = QtCore.QSize(int(QtGui.QFontMetricsF(font).horizontalAdvance(text)) + 8, int(line) + 1 + 2 * pad)
        img = QtGui.QImage(size, QtGui.QImage.Format.Format_Alpha8)
        img.fill(0)
        p = QtGui.QPainter(img)
        p.setFont(font)
        flags = QtCore.Qt.AlignmentFlag.AlignVCenter | QtCore.Qt.TextFlag.TextDontClip  # as the axis draws it
        p.drawText(QtCore.QRectF(4, pad, size.width() - 8, line), int(flags), text)
        p.end()
        rows = [y for y in range(size.height()) if any(img.constScanLine(y).tobytes()[: size.width()])]
        hit = _INK[key] = (rows[0] + rows[-1] + 1) / 2 - pad if rows else line / 2
    return hit


class TokenAxis(CachedAxisPaint, pg.AxisItem):
    """An AxisItem for token ticks set with ``setTicks([[(i + 0.5, token), …]])``."""

    def __init__(self, orientation: str, **kw) -> None:
        super().__init__(orientation, **kw)
        self.enableAutoSIPrefix(False)  # token positions, not quantities; else every range change re-sets the label
        self.drawn: list[tuple[QtCore.QRectF, str, int]] = []  # (rect in item coords, text, token index)
        self.max_chars = MAX_CHARS
        self.staggered = False  # bottom labels on two alternating lines because one line was too crowded
        self.angled = False  # bottom labels at 45° because even two lines were too crowded
        self.shrink_min_pt: int | None = None  # set: a smaller font (down to this) before dropping labels
        self.centre_ink = False  # row labels: each one's ink (not its line box) centred on its row ("'" too)
        self._shrunk: QtGui.QFont | None = None  # the smaller font the labels were last laid out in
        self.setAcceptHoverEvents(True)
        self._measured: dict[tuple, tuple[str, float]] = {}  # (font, width limit, token) -> (shown text, width)
        self._static: dict[tuple, tuple] = {}  # (font, shown text) -> (its laid-out glyphs, width, height)
        self._specs: tuple | None = None  # what paint() draws (see _prepare)
        self._reach: tuple | None = None  # ((font key, max chars), px): how far 45° labels reach left of the axis
        self._text_floor = 0  # px: the widest room this row axis's current labels needed (see _updateMaxTextSize)

    def setTicks(self, ticks) -> None:
        """As pyqtgraph's, but the same ticks again keep the drawn axis (no re-layout of its labels)."""
        if ticks is not None and ticks == self._tickLevels:
            return
        self._text_floor = 0  # new labels: the room for them may shrink again
        super().setTicks(ticks)

    def _updateMaxTextSize(self, x: int) -> None:
        """As pyqtgraph's, but a row axis's width only grows while its labels stay the same.
        Its labels shrink to fit the rows, so its width follows the map's height; the column
        labels go to two lines when the map is narrow, which makes the map shorter. Left free,
        the two fed each other (map narrower → columns on two lines → map shorter → row labels
        smaller → map wider → columns on one line → …): a layout that never settled, redrawn at
        every frame. Keeping the widest room the labels needed breaks that loop."""
        if self.orientation in ("left", "right"):
            x = self._text_floor = max(x, self._text_floor)
        super()._updateMaxTextSize(x)

    def setRange(self, mn, mx) -> None:
        """As pyqtgraph's, but the same range again keeps the drawn axis (a view that grows by a row
        per step sets its unchanged column range again, and that re-laid out every column label)."""
        if list(getattr(self, "range", ())) == [mn, mx]:
            return
        super().setRange(mn, mx)

    def show(self) -> None:
        """As pyqtgraph's, but showing a visible axis keeps its drawing (callers show their axes at
        every redraw; pyqtgraph re-lays out the labels at each call)."""
        if self.isVisible():
            return
        super().show()

    def boundingRect(self) -> QtCore.QRectF:
        """As pyqtgraph's; a bottom axis reaches further left by the longest angled label's run
        (labels at 45° end at their tick and rise to the left): Qt repaints an item only inside
        it, which cut the first column's label."""
        rect = super().boundingRect()
        if self.orientation != "bottom":
            return rect
        font = self.style["tickFont"] or QtGui.QFont()  # the base font: a shrunk one reaches less far
        key = (font.key(), self.max_chars)
        if self._reach is None or self._reach[0] != key:
            fm = QtGui.QFontMetricsF(font)
            self._reach = (key, (fm.averageCharWidth() * self.max_chars + fm.height()) * SIN45)
        return rect.adjusted(-self._reach[1], 0, 0, 0)

    def setStyle(self, **kwargs) -> None:
        """As pyqtgraph's; a new tick font changes how far the bounding rect reaches (Qt must know
        before, or the old labels' pixels stay on screen)."""
        if "tickFont" in kwargs:
            self.prepareGeometryChange()
            self._reach = None
            self._text_floor = 0
        super().setStyle(**kwargs)

    def _title_extra(self, fixed) -> float:
        """Px to add to pyqtgraph's room for the axis title. It reserves 0.8 of the title's box
        height ("usually an overestimate"), but at lecture-hall sizes the title's descenders ("q",
        "y", "(") then reach the longest token label. Reserved here: the whole box less the
        nudge that moves it outwards, and a :data:`GAP` between title and labels."""
        label = getattr(self, "label", None)  # None once the axis is closed (resizes can still arrive)
        if fixed is not None or label is None or not self.isVisible() or not self.style["showValues"] or not label.isVisible():
            return 0.0
        h = label.boundingRect().height()
        return max(0.0, h - TITLE_NUDGE + GAP - 0.8 * h)

    def _updateWidth(self) -> None:
        """As pyqtgraph's, with the title's whole height reserved (see :meth:`_title_extra`)."""
        super()._updateWidth()
        extra = self._title_extra(self.fixedWidth)
        if extra:
            w = self.maximumWidth() + extra
            self.setMaximumWidth(w)
            self.setMinimumWidth(w)

    def _updateHeight(self) -> None:
        """As pyqtgraph's, with the title's whole height reserved (see :meth:`_title_extra`)."""
        super()._updateHeight()
        extra = self._title_extra(self.fixedHeight)
        if extra:
            h = self.maximumHeight() + extra
            self.setMaximumHeight(h)
            self.setMinimumHeight(h)

    def _label(self, fm: QtGui.QFontMetricsF, font_key: str, max_w: float, token) -> tuple[str, float]:
        """The label shown for ``token`` (elided to ``max_w`` px) and its width in px, measured once
        per font: an axis is laid out again at every step, with mostly the same tokens."""
        key = (font_key, max_w, token)
        hit = self._measured.get(key)
        if hit is None:
            if len(self._measured) > 4096:
                self._measured.clear()
            text = fm.elidedText(str(token), QtCore.Qt.TextElideMode.ElideRight, max_w)
            hit = self._measured[key] = (text, fm.horizontalAdvance(text) + 2)
        return hit

    def tokens(self) -> list[tuple[float, str]]:
        return list(self._tickLevels[0]) if self._tickLevels else []

    def _font(self) -> QtGui.QFont:
        return self._shrunk or self.style["tickFont"] or QtGui.QFont()

    def generateDrawSpecs(self, p):
        show = self.style["showValues"]
        try:
            specs = self._line_specs()
        except NotImplementedError:
            self.style["showValues"] = False  # the base class draws the line and ticks, we the text
            try:
                specs = super().generateDrawSpecs(p)
            finally:
                self.style["showValues"] = show
        self.drawn = []
        self._shrunk = None
        if specs is None or not show:
            return specs
        axis_spec, tick_specs, _ = specs
        ticks = self.tokens()
        bounds = self.mapRectFromParent(self.geometry())
        lo, hi = self.range
        dif = hi - lo
        if not ticks or dif == 0:
            return axis_spec, tick_specs, []
        base = self._font()
        vertical = self.orientation in ("left", "right")
        if vertical:
            scale = -bounds.height() / dif
            offset = lo * scale - bounds.height()
            a0, a1 = bounds.top(), bounds.bottom()
        else:
            scale = bounds.width() / dif
            offset = lo * scale
            a0, a1 = bounds.left(), bounds.right()
        placed = self._place(base, ticks, vertical, scale, offset, a0, a1)
        if self.shrink_min_pt is not None and len(placed[1]) < len(placed[0]) and base.pointSize() > self.shrink_min_pt:
            placed = self._shrink(base, ticks, vertical, scale, offset, a0, a1)
        items, keep, v_pos = placed
        text_offset = max(0, self.style["tickLength"]) + self.style["tickTextOffset"][1 if not vertical else 0]
        specs_text = []
        align = QtCore.Qt.AlignmentFlag
        flags = {
            "left": align.AlignRight | align.AlignVCenter,
            "right": align.AlignLeft | align.AlignVCenter,
            "top": align.AlignHCenter | align.AlignBottom,
        }.get(self.orientation)
        if flags is None:  # bottom: angled labels' rect is their footprint on the axis (drawn turned)
            flags = align.AlignRight | align.AlignTop if self.angled else align.AlignHCenter | align.AlignTop
        flags = flags | QtCore.Qt.TextFlag.TextDontClip  # one flag value for every label (enum maths is slow)
        rect_of = QtCore.QRectF
        ink_font = self._font() if vertical and self.centre_ink else None
        for line, j in enumerate(keep):
            i, text, start, end, w, h = items[j]
            if ink_font is not None:  # drawn centred in its line box: move the ink's centre to the box's centre
                start += h / 2 - ink_centre(ink_font, text, h)
            if self.orientation == "left":
                rect = rect_of(bounds.right() - text_offset - w, start, w, h)
            elif self.orientation == "right":
                rect = rect_of(bounds.left() + text_offset, start, w, h)
            elif self.orientation == "bottom" and self.angled:
                rect = rect_of(start, bounds.top() + text_offset, end - start, h)
            elif self.orientation == "bottom":  # staggered: every other label one line lower
                rect = rect_of(start, bounds.top() + text_offset + (line % 2) * h * self.staggered, w, h)
            else:
                rect = rect_of(start, bounds.bottom() - text_offset - h, w, h)
            specs_text.append((rect, flags, text))
            self.drawn.append((rect, text, i))
        size = max((it[4] if vertical else it[5]) for it in items) if items else 0
        if self.angled:
            size = max((it[4] + it[5]) * SIN45 for it in items)
        self._updateMaxTextSize(int(size * (2 if self.staggered else 1)))
        return axis_spec, tick_specs, specs_text

    def _shrink(self, base: QtGui.QFont, *where) -> tuple:
        """The largest point size from ``shrink_min_pt`` up at which every label fits (a bisection:
        a few layouts, not one per size), kept in ``_shrunk``; the base font's layout (thinned) when
        even the smallest cannot fit them all: a readable font then, rather than a tiny one."""

        def at(pt: int) -> tuple:
            font = QtGui.QFont(base)
            font.setPointSize(pt)
            return font, self._place(font, *where)

        lo, hi = self.shrink_min_pt, base.pointSize() - 1
        font, fit = at(lo)
        if len(fit[1]) < len(fit[0]):
            return self._place(base, *where)  # again: _place also sets staggered / angled for what is drawn
        while lo < hi:  # invariant: every label fits at lo
            mid = (lo + hi + 1) // 2
            font, trial = at(mid)
            if len(trial[1]) == len(trial[0]):
                lo = mid
            else:
                hi = mid - 1
        font, fit = at(lo)
        self._shrunk = font
        return fit

    def _place(self, font: QtGui.QFont, ticks, vertical: bool, scale: float, offset: float, a0: float, a1: float):
        """Lay out the labels in ``font``: ``(items, keep, positions)`` — items ``(index, text,
        start, end, w, h)`` in axis order, the indices of those drawn (thinned where crowded; bottom
        labels staggered or angled, see ``staggered`` / ``angled``) and each tick's position."""
        fm, font_key = QtGui.QFontMetricsF(font), font.toString()
        max_w = fm.averageCharWidth() * self.max_chars
        h = fm.height()
        items = []  # (index, text, start, end, w, h)
        v_pos = {}
        for i, (v, token) in enumerate(ticks):
            x = v * scale - offset
            v_pos[i] = x
            if x < a0 - 0.5 or x > a1 + 0.5:
                continue
            text, w = self._label(fm, font_key, max_w, token)
            half = (h if vertical else w) / 2
            start = min(max(x - half, a0), a1 - 2 * half)  # keep the label inside the axis
            items.append((i, text, start, start + 2 * half, w, h))
        items.sort(key=lambda it: it[2])
        keep = thin([(it[2], it[3]) for it in items])
        self.staggered = self.angled = False
        if not vertical and len(keep) < len(items):  # crowded: two alternating lines, else 45°
            keep_two = thin([(it[2], it[3]) for it in items], lines=2)
            angled = []  # parallel 45° labels need a line height / sin 45° between ticks
            for i, text, _start, _end, w, h in items:
                half = h / SIN45 / 2
                start = min(max(v_pos[i] - half, a0), a1 - 2 * half)
                angled.append((i, text, start, start + 2 * half, w, h))
            keep_45 = thin([(it[2], it[3]) for it in angled])
            if len(keep_two) >= len(keep_45) and len(keep_two) > len(keep):
                keep, self.staggered = keep_two, True
            elif len(keep_45) > len(keep):
                items, keep, self.angled = angled, keep_45, True
        return items, keep, v_pos

    def drawPicture(self, p, axisSpec, tickSpecs, textSpecs):
        """Angled labels (drawn here, each ending at its tick and rising to it at 45°), or the base
        class's line, ticks and labels (exports and other callers)."""
        if not self.angled:
            saved = self.style["tickFont"]
            self.style["tickFont"] = self._font()  # the smaller font the labels were laid out in, if any
            try:
                return super().drawPicture(p, axisSpec, tickSpecs, textSpecs)
            finally:
                self.style["tickFont"] = saved
        super().drawPicture(p, axisSpec, tickSpecs, [])
        p.setFont(self._font())
        p.setPen(self.textPen())
        fm = QtGui.QFontMetricsF(self._font())
        for rect, _flags, text in textSpecs:  # rect: the label's footprint along the axis
            w = fm.horizontalAdvance(text) + 2
            p.save()
            p.translate(rect.center().x(), rect.top())
            p.rotate(-45)
            p.drawText(QtCore.QRectF(-w, 0, w, rect.height()), int(QtCore.Qt.AlignmentFlag.AlignRight), text)
            p.restore()

    def token_at(self, pos: QtCore.QPointF) -> str | None:
        """The full token whose tick is nearest ``pos`` (item coordinates), or None."""
        ticks = self.tokens()
        view = self.linkedView()
        if not ticks or view is None:
            return None
        p = view.mapSceneToView(self.mapToScene(pos))
        v = p.y() if self.orientation in ("left", "right") else p.x()
        dist, token = min((abs(tv - v), t) for tv, t in ticks)
        return str(token) if dist <= 0.5 else None

    def hoverEvent(self, ev) -> None:
        if ev.isExit():
            self.setToolTip("")
            return
        token = self.token_at(ev.pos())
        self.setToolTip(token or "")


def token_axes(*names: str) -> dict[str, TokenAxis]:
    """``{"left": TokenAxis("left"), …}`` for PlotItem(axisItems=…)."""
    return {n: TokenAxis(n) for n in names}


def no_si_prefix(plot: pg.PlotItem) -> None:
    """Turn pyqtgraph's automatic SI prefix off on every axis of ``plot``: it re-sets the axis
    label's HTML at every range change, also on the hidden top and right axes (about 0.2 ms
    each, at every step of a map that grows by a row)."""
    for side in ("left", "bottom", "right", "top"):
        plot.getAxis(side).enableAutoSIPrefix(False)


def _update_min_height_only(label: pg.LabelItem) -> None:
    """LabelItem.updateMin without a minimum width (it runs on every resize of the label)."""
    bounds = label.itemRect()
    label.setMinimumWidth(0)
    label.setMinimumHeight(bounds.height())
    hint = QtCore.Qt.SizeHint
    label._sizeHint = {
        hint.MinimumSize: (0, bounds.height()),
        hint.PreferredSize: (bounds.width(), bounds.height()),
        hint.MaximumSize: (-1, -1),
        hint.MinimumDescent: (0, 0),
    }
    label.updateGeometry()


_NATURAL: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # title -> (text, unwrapped width)
_WRAPPED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # title -> (text, text width, height) set last


def wrap_title(label: pg.LabelItem, width: float) -> None:
    """Wrap a plot title to ``width`` pixels (call it with the plot area's width whenever that
    changes); the title never sets the plot's minimum width, so a long title at a large font
    cannot push the colour bar out of view or the window past its size."""
    label.updateMin = lambda: _update_min_height_only(label)  # also on the label's own resizes
    item = label.item
    text = (label.text, repr(sorted(label.opts.items())), item.font().key())
    natural, done = _NATURAL.get(label), _WRAPPED.get(label)
    if natural is None or natural[0] != text:  # (text, its unwrapped width): measured once per text
        item.setTextWidth(-1)
        natural = _NATURAL[label] = (text, item.boundingRect().width())
    target = -1.0 if natural[1] <= width else max(width, 60.0)
    # A map's plot area changes width at every step (its axis labels do) and the title mostly still
    # fits: nothing to do then. (PlotItem.setTitle sets the row and maximum height to 30: checked.)
    if done is not None and done[:2] == (text, target) and item.textWidth() == target and label.maximumHeight() == done[2]:
        return
    item.setTextWidth(target)
    label.updateMin()
    label.setMinimumWidth(0)
    height = item.boundingRect().height() if label.text else 0
    _WRAPPED[label] = (text, target, height)
    label.setMaximumHeight(height)  # pyqtgraph fixes the title row at 30 px: too small for large fonts
    plot = label.parentItem()
    if isinstance(plot, pg.PlotItem):
        plot.layout.setRowFixedHeight(0, height)
    label.updateGeometry()
