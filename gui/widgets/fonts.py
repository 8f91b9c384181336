"""Presenter comfort: every text follows one font size, and panels keep a readable minimum size
(in text lines and characters of that font) — the window scrolls rather than squeezing a panel
or widening itself past the size it was given."""

from __future__ import annotations

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

    def resizeEvent(self, ev) -> None:  # noqa: N802 (Qt naming)
        super().resizeEvent(ev)
        self.fit()

    def eventFilter(self, obj, ev) -> bool:  # noqa: N802 (Qt naming)
        if obj is self.widget() and ev.type() == QtCore.QEvent.Type.LayoutRequest:
            QtCore.QTimer.singleShot(0, self, self.fit)  # dropped if this widget is gone by then
        return super().eventFilter(obj, ev)


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
