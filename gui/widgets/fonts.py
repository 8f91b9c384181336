"""Presenter comfort: every text follows one font size, and panels keep a readable minimum size
(in text lines and characters of that font) — the window scrolls rather than squeezing a panel
or widening itself past the size it was given."""

from __future__ import annotations

import math

from PySide6 import QtCore, QtGui, QtWidgets

MIN_POINT, MAX_POINT = 7, 40


def clamp_point(size: int) -> int:
    """Font size in points kept within [7, 40]."""
    return max(MIN_POINT, min(MAX_POINT, int(size)))


class FitScroll(QtWidgets.QScrollArea):
    """A scroll area that gives its widget the viewport's size, or the widget's minimum size
    where that is larger (then scroll bars appear). Unlike ``widgetResizable`` it ignores
    height-for-width (word-wrapped labels), which would make the content taller than the window."""

    def __init__(self, widget: QtWidgets.QWidget) -> None:
        super().__init__()
        self.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.setWidgetResizable(False)
        self.setWidget(widget)
        widget.installEventFilter(self)

    def fit(self) -> None:
        w = self.widget()
        need = w.minimumSizeHint().expandedTo(w.minimumSize())
        view = self.maximumViewportSize()  # the size without scroll bars
        width = max(view.width(), need.width())
        height = max(view.height(), need.height())
        if width > view.width():  # a horizontal bar takes height
            height = max(view.height() - self.horizontalScrollBar().sizeHint().height(), need.height())
        if height > view.height():
            width = max(view.width() - self.verticalScrollBar().sizeHint().width(), need.width())
        w.resize(width, height)

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        self.fit()

    def eventFilter(self, obj, ev) -> bool:
        if obj is self.widget() and ev.type() == QtCore.QEvent.Type.LayoutRequest:
            QtCore.QTimer.singleShot(0, self, self.fit)  # dropped if this widget is gone by then
        return super().eventFilter(obj, ev)


QWIDGETSIZE_MAX = (1 << 24) - 1  # Qt's largest widget size: no maximum


class WrappedLabel(QtWidgets.QLabel):
    """A word-wrapped label that asks for the height its wrapped lines take at its current width,
    up to ``max_lines`` lines (a longer text shows its first lines).
    Layouts inside a dock or a main window's strip do not ask a label's height for its width, so
    a plain wrapped label keeps its one-line height and cuts the lines it wraps into."""

    fitted = QtCore.Signal(int)  # the new minimum height in pixels, after the text, font or width changed it

    def __init__(self, text: str = "", parent=None, max_lines: int = 6, max_share: float = 0.2) -> None:
        super().__init__(text, parent)
        self.setWordWrap(True)
        self.setAlignment(QtCore.Qt.AlignmentFlag.AlignLeft | QtCore.Qt.AlignmentFlag.AlignTop)
        self.max_lines = max_lines  # a longer text shows its first lines (it stays selectable; tooltip: all)
        self.max_share = max_share  # and never more than this share of the window's height (at least 2 lines)

    def _fit(self) -> None:
        """Minimum height: the text laid out at the label's width (a text document of its font;
        QLabel's own heightForWidth came out lines too tall inside the window's strip)."""
        width = self.contentsRect().width()
        if width <= 0:
            return
        doc = QtGui.QTextDocument()
        doc.setDefaultFont(self.font())
        doc.setDocumentMargin(0)
        text = self.text()
        if QtGui.Qt.mightBeRichText(text):
            doc.setHtml(text)
        else:
            doc.setPlainText(text)
        doc.setTextWidth(width)
        margins = self.contentsMargins()
        height = doc.size().height()
        bottoms = []  # where each line ends, in px from the top (blocks of rich text have margins between them)
        block, layout = doc.begin(), doc.documentLayout()
        while block.isValid():
            top, lines = layout.blockBoundingRect(block).top(), block.layout()
            bottoms += [top + lines.lineAt(i).y() + lines.lineAt(i).height() for i in range(lines.lineCount())]
            block = block.next()
        bottoms = sorted({round(b, 1) for b in bottoms})  # a table's cells side by side end on one line
        n_lines = len(bottoms)
        per_line = height / max(n_lines, 1)
        fit_lines = min(self.max_lines, max(2, int(self.window().height() * self.max_share / max(per_line, 1))))
        cut = n_lines > fit_lines
        if cut:  # the window must not grow for it: the first lines whole (no part of the next), all of it on hover
            height = bottoms[fit_lines - 1]
        self.setToolTip(doc.toPlainText() if cut else "")
        need = math.ceil(height) + margins.top() + margins.bottom()
        self.setMaximumHeight(need if cut else QWIDGETSIZE_MAX)  # a taller row would show part of the next line
        if need != self.minimumHeight():
            self.setMinimumHeight(need)
            self.fitted.emit(need)

    def setText(self, text: str) -> None:
        super().setText(text)
        self._fit()

    def changeEvent(self, ev) -> None:
        super().changeEvent(ev)
        if ev.type() == QtCore.QEvent.Type.FontChange:  # setFont, or a font inherited from the window
            self._fit()

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        self._fit()


def scrolling(widget: QtWidgets.QWidget) -> QtWidgets.QScrollArea:
    """``widget`` inside a :class:`FitScroll`: when the panels' minimum sizes exceed the window,
    scroll bars appear instead of the window growing or a panel collapsing."""
    return FitScroll(widget)


def minimum_sizes(font: QtGui.QFont) -> dict[str, tuple[int, int]]:
    """Readable minimum ``(width, height)`` in pixels of each main panel for ``font``."""
    fm = QtGui.QFontMetrics(font)
    line, ch = fm.height(), fm.averageCharWidth()
    return {
        "heatmap": (42 * ch, 13 * line),  # token axis (≤ 12 chars) + colour bar + a map ≥ 16 chars wide
        "grid": (26 * ch, 9 * line),
        "topk": (20 * ch, 9 * line),
        "masks": (26 * ch, 7 * line),
    }


def apply_minimums(widgets: dict, font: QtGui.QFont, split: QtWidgets.QSplitter | None = None) -> None:
    """Give ``widgets`` (``{"heatmap": …, "grid": …, "topk": …, "masks": …}``) their minimum
    sizes for ``font`` (:func:`minimum_sizes`); the panes of ``split`` never collapse."""
    sizes = minimum_sizes(font)
    for name, (w, h) in sizes.items():
        if name in widgets:  # a widget that can need more than the floor (the grid) takes it as one
            getattr(widgets[name], "set_min_size", widgets[name].setMinimumSize)(w, h)
    if split is not None:
        split.setChildrenCollapsible(False)
