"""Alignment lines (bertviz-style): the queries in a column on the left, the keys on the right,
one line per (query, key) whose opacity is the attention weight. Easier to read from the back
of a lecture hall than a matrix.

Cross-attention: target queries → source keys; encoder: source → source; decoder: target →
target. Masked keys (True = masked: padding, the causal mask, keys not computed yet) and
padding queries draw no line. Click a query token to keep only its lines (and print the weights
beside the keys); click it again to see every line.
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

LINE_RGB = (25, 80, 190)
MARGIN = 10
GAP = 12  # pixels between a token's text and its line end
SMOOTH_UP_TO = 400  # lines drawn antialiased; more (e.g. 40 × 40) are drawn plain: ~5× faster to paint
MIN_POINT = 8.0  # token labels never shrink below this (legible); with more tokens the panel scrolls
ROW_SPACING = 1.35  # row pitch ≥ this × the font's line height, so ▁I above ' never touch
MIN_HEIGHT = 280  # pixels, with few tokens


class AlignmentLines(QtWidgets.QWidget):
    """Draws ``matrix [rows, cols]`` (rows = queries, columns = keys) as lines.

    ``lines``: ``[(query, key, weight)]`` that are drawn (0-based), in drawing order; ``painted``:
    ``[(query, key, alpha)]`` as the last paint set each pen's alpha (alpha = weight);
    ``label_rects``: ``[(QRectF, token)]`` the line boxes of the token labels the last paint drew.
    Rows are at least ``ROW_SPACING`` line heights apart: the font shrinks to ``MIN_POINT`` at the
    least, and beyond that the minimum height grows (the panel scrolls).
    Signal ``focus_changed(int)``: the focused query row, or -1 for none.
    """

    focus_changed = QtCore.Signal(int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.mask: np.ndarray | None = None
        self.query_ok = np.zeros(0, dtype=bool)
        self.row_tokens: list[str] = []
        self.col_tokens: list[str] = []
        self.row_label, self.col_label, self.title = "query", "key", ""
        self.focus: int | None = None
        self.lines: list[tuple[int, int, float]] = []
        self.painted: list[tuple[int, int, float]] = []
        self.label_rects: list[tuple[QtCore.QRectF, str]] = []
        self.setMinimumSize(260, MIN_HEIGHT)
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Expanding)

    # ---------- data ----------
    def set_data(
        self,
        matrix: np.ndarray,
        mask: np.ndarray | None,
        row_tokens: list[str],
        col_tokens: list[str],
        row_label: str,
        col_label: str,
        title: str,
        query_valid: np.ndarray | None = None,
    ) -> None:
        """Show ``matrix [rows, cols]``; ``mask`` same shape, True = masked (no line);
        ``query_valid [rows]`` False for padding queries (no line)."""
        self.matrix = np.nan_to_num(np.asarray(matrix, dtype=np.float64))
        rows, cols = self.matrix.shape
        self.mask = None if mask is None else np.asarray(mask, dtype=bool)
        self.query_ok = np.ones(rows, bool) if query_valid is None else np.asarray(query_valid, bool)[:rows]
        self.row_tokens, self.col_tokens = list(row_tokens)[:rows], list(col_tokens)[:cols]
        self.row_label, self.col_label, self.title = row_label, col_label, title
        if self.focus is not None and self.focus >= rows:
            self.focus = None
        self._compute()
        self._fit_height()
        self.update()

    def _fit_height(self) -> None:
        """Minimum height for the tokens at ``MIN_POINT`` and ``ROW_SPACING`` (the scroll area
        around the panel scrolls when the window is smaller)."""
        font = QtGui.QFont(self.font())
        font.setPointSizeF(MIN_POINT)
        n = max(self.matrix.shape) if self.matrix.size else 0
        need = self._top() + MARGIN + n * QtGui.QFontMetricsF(font).height() * ROW_SPACING
        self.setMinimumHeight(max(MIN_HEIGHT, int(need) + 1))

    def changeEvent(self, ev) -> None:
        if ev.type() == QtCore.QEvent.Type.FontChange:
            self._fit_height()
        super().changeEvent(ev)

    def _top(self) -> float:
        head = QtGui.QFont(self.font())
        head.setBold(True)
        return MARGIN + 2 * QtGui.QFontMetricsF(head).height() + 6  # title, then the column headings

    def clear(self, title: str = "") -> None:
        self.set_data(np.zeros((0, 0)), None, [], [], "query", "key", title)

    def set_focus(self, row: int | None) -> None:
        """Keep only query ``row``'s lines (None: all rows)."""
        self.focus = None if row is None or not 0 <= row < self.matrix.shape[0] else int(row)
        self._compute()
        self.update()
        self.focus_changed.emit(-1 if self.focus is None else self.focus)

    def _compute(self) -> None:
        rows, cols = self.matrix.shape
        out = []
        for r in range(rows):
            if not self.query_ok[r] or (self.focus is not None and r != self.focus):
                continue
            for c in range(cols):
                w = float(self.matrix[r, c])
                if w > 0 and (self.mask is None or not self.mask[r, c]):
                    out.append((r, c, w))
        self.lines = out

    # ---------- geometry ----------
    def _font(self, n: int, height: float) -> QtGui.QFont:
        """The app font (Hangul via NanumGothic), 3 pt larger, shrunk until ``n`` tokens fit at
        ``ROW_SPACING`` line heights each, but never below ``MIN_POINT``."""
        font = QtGui.QFont(self.font())
        pt = max(self.font().pointSizeF(), MIN_POINT) + 3
        while True:
            font.setPointSizeF(pt)
            if pt <= MIN_POINT or QtGui.QFontMetricsF(font).height() * ROW_SPACING * max(n, 1) <= height:
                return font
            pt = max(pt - 0.5, MIN_POINT)

    def _layout(self) -> dict:
        rows, cols = self.matrix.shape
        head = QtGui.QFont(self.font())
        head.setBold(True)
        hm = QtGui.QFontMetricsF(head)
        top = self._top()
        body = max(self.height() - top - MARGIN, 10)
        font = self._font(max(rows, cols), body)
        fm = QtGui.QFontMetricsF(font)
        width_cap = self.width() * 0.3
        left_w = min(max([fm.horizontalAdvance(t) for t in self.row_tokens] + [hm.horizontalAdvance(self.row_label)]), width_cap)
        right_w = min(
            max([fm.horizontalAdvance(t + " 0.00") for t in self.col_tokens] + [hm.horizontalAdvance(self.col_label)]), width_cap
        )
        x_left = MARGIN + left_w + GAP
        x_right = self.width() - MARGIN - right_w - GAP

        def ys(n: int) -> list[float]:
            step = body / max(n, 1)
            return [top + (i + 0.5) * step for i in range(n)]

        return dict(
            font=font,
            fm=fm,
            head=head,
            hm=hm,
            top=top,
            left_w=left_w,
            right_w=right_w,
            x_left=x_left,
            x_right=x_right,
            row_y=ys(rows),
            col_y=ys(cols),
        )

    def row_at(self, pos: QtCore.QPointF) -> int | None:
        """The query row whose token is at ``pos`` (the left column), or None."""
        g = self._layout()
        if pos.x() > g["x_left"]:
            return None
        half = g["fm"].height() / 2 + 1
        for i, y in enumerate(g["row_y"]):
            if abs(pos.y() - y) <= half:
                return i
        return None

    # ---------- drawing ----------
    def paintEvent(self, ev) -> None:
        p = QtGui.QPainter(self)
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), QtGui.QColor("white"))
        g = self._layout()
        p.setFont(g["head"])
        p.setPen(QtGui.QColor("#222222"))
        title = g["hm"].elidedText(self.title, QtCore.Qt.TextElideMode.ElideRight, self.width() - 2 * MARGIN)
        p.drawText(QtCore.QPointF(MARGIN, MARGIN + g["hm"].ascent()), title)
        y_head = MARGIN + g["hm"].height() + g["hm"].ascent() + 2
        p.drawText(QtCore.QPointF(MARGIN, y_head), self.row_label)
        p.drawText(QtCore.QPointF(self.width() - MARGIN - g["hm"].horizontalAdvance(self.col_label), y_head), self.col_label)
        self.painted = []
        width = 3.0 if self.focus is not None else 2.0
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, len(self.lines) <= SMOOTH_UP_TO)
        for r, c, w in self.lines:
            colour = QtGui.QColor(*LINE_RGB)
            colour.setAlphaF(min(max(w, 0.0), 1.0))
            p.setPen(QtGui.QPen(colour, width))
            p.drawLine(QtCore.QPointF(g["x_left"], g["row_y"][r]), QtCore.QPointF(g["x_right"], g["col_y"][c]))
            self.painted.append((r, c, colour.alphaF()))
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
        self._draw_tokens(p, g)
        p.end()

    def _draw_tokens(self, p: QtGui.QPainter, g: dict) -> None:
        fm, half = g["fm"], g["fm"].ascent() / 2 - 1
        p.setFont(g["font"])
        self.label_rects = []

        def box(x: float, y: float, text: str) -> None:  # the label's line box, as drawn at baseline y
            self.label_rects.append((QtCore.QRectF(x, y - fm.ascent(), fm.horizontalAdvance(text), fm.height()), text))

        elide = QtCore.Qt.TextElideMode.ElideRight
        for i, tok in enumerate(self.row_tokens):
            text = fm.elidedText(tok, elide, g["left_w"])
            x = g["x_left"] - GAP - fm.horizontalAdvance(text)
            if i == self.focus:
                p.fillRect(
                    QtCore.QRectF(x - 3, g["row_y"][i] - fm.height() / 2, fm.horizontalAdvance(text) + 6, fm.height()),
                    QtGui.QColor(255, 225, 140),
                )
            p.setPen(QtGui.QColor("#222222" if self.query_ok[i] else "#aaaaaa"))
            p.drawText(QtCore.QPointF(x, g["row_y"][i] + half), text)
            box(x, g["row_y"][i] + half, text)
        col_masked = self.mask.all(0) if self.mask is not None and self.mask.shape[0] else np.zeros(len(self.col_tokens), bool)
        for j, tok in enumerate(self.col_tokens):
            label = tok
            if self.focus is not None:
                masked = self.mask is not None and bool(self.mask[self.focus, j])
                label = f"{tok} {'–' if masked else format(self.matrix[self.focus, j], '.2f')}"
            text = fm.elidedText(label, elide, g["right_w"])
            p.setPen(QtGui.QColor("#aaaaaa" if col_masked[j] else "#222222"))
            p.drawText(QtCore.QPointF(g["x_right"] + GAP, g["col_y"][j] + half), text)
            box(g["x_right"] + GAP, g["col_y"][j] + half, text)

    def mousePressEvent(self, ev) -> None:
        row = self.row_at(ev.position())
        if row is not None:
            self.set_focus(None if row == self.focus else row)
        super().mousePressEvent(ev)


class AlignmentPanel(QtWidgets.QWidget):
    """The lines plus a "layer mean" switch and a one-line hint. ``mean_toggled(bool)``."""

    mean_toggled = QtCore.Signal(bool)
    HINT = "line opacity = weight · click a query token on the left to keep only its lines"

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        self.mean = QtWidgets.QCheckBox("Show the layer mean (derived) instead of the selected head")
        self.mean.toggled.connect(self.mean_toggled)
        self.hint = QtWidgets.QLabel(self.HINT)
        self.hint.setWordWrap(True)
        self.lines = AlignmentLines()
        self.scroll = QtWidgets.QScrollArea()  # many tokens: legible rows that scroll, not squeezed ones
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.scroll.setMinimumHeight(MIN_HEIGHT - 20)
        self.scroll.setWidget(self.lines)
        lay.addWidget(self.mean)
        lay.addWidget(self.hint)
        lay.addWidget(self.scroll, 1)
