"""A widget whose text changes at every decoder step, without re-laying out the whole window.

A QLabel's ``setText`` always tells its parent's layout that its size may have changed, and the
layout then lays out every widget up to the window again (the main window, its docks and their
word-wrapped labels, which measure their text each time): about 1 ms per step for the
translation line alone. :class:`LayoutFence` holds one widget, answers its parent layout's
questions with that widget's sizes, and passes a layout request on only when one of those sizes
really changed.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets


class LayoutFence(QtWidgets.QWidget):
    """Holds ``child`` (reparented here) filling its whole area. Its size hints, minimum and maximum
    size and height-for-width are the child's; a layout request from the child reaches the parent
    layout only when one of them changed (``passed`` counts those, ``held`` the others).

    ``hints`` False: only the child's minimum and maximum size and size policy are watched, for a
    child that sets its own minimum height as its text needs (:class:`gui.widgets.fonts.WrappedLabel`):
    measuring a rich text's hints at every change costs about as much as the re-layout saved. The
    parent layout still reads the child's hints whenever it lays out for another reason."""

    def __init__(self, child: QtWidgets.QWidget, parent: QtWidgets.QWidget | None = None, hints: bool = True) -> None:
        super().__init__(parent)
        self.child = child
        self.hints = hints
        child.setParent(self)
        self.setSizePolicy(child.sizePolicy())
        self._hints: tuple | None = None
        self.passed = 0
        self.held = 0
        self._sync()
        fitted = getattr(child, "fitted", None)  # WrappedLabel: its new minimum height, at once (not posted)
        if isinstance(fitted, QtCore.SignalInstance):
            fitted.connect(self._sync)

    def _child_min(self) -> QtCore.QSize:
        """The least size a layout gives the child: its explicit minimum, else its minimum hint."""
        c, hint = self.child, self.child.minimumSizeHint()
        return QtCore.QSize(c.minimumWidth() or max(hint.width(), 0), c.minimumHeight() or max(hint.height(), 0))

    def sizeHint(self) -> QtCore.QSize:
        return self.child.sizeHint().expandedTo(self._child_min()).boundedTo(self.child.maximumSize())

    def minimumSizeHint(self) -> QtCore.QSize:
        return self._child_min()

    def hasHeightForWidth(self) -> bool:
        return self.child.hasHeightForWidth()

    def heightForWidth(self, width: int) -> int:
        return self.child.heightForWidth(width)

    def _sync(self) -> bool:
        """Take on the child's sizes; True (and the parent layout told) when any changed."""
        c = self.child
        if self.maximumSize() != c.maximumSize():
            self.setMaximumSize(c.maximumSize())  # tells the parent layout itself
        if self.hints:
            hfw = c.heightForWidth(self.width()) if c.hasHeightForWidth() and self.width() > 0 else None
            hints = (self.sizeHint(), self.minimumSizeHint(), c.maximumSize(), c.sizePolicy(), hfw)
        else:
            hints = (c.minimumSize(), c.maximumSize(), c.sizePolicy())
        if hints == self._hints:
            return False
        self._hints = hints
        self.setSizePolicy(c.sizePolicy())
        self.updateGeometry()
        return True

    def event(self, ev: QtCore.QEvent) -> bool:
        if ev.type() == QtCore.QEvent.Type.LayoutRequest:  # posted by the child's updateGeometry
            if self._sync():
                self.passed += 1
            else:
                self.held += 1
            return True
        return super().event(ev)

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        self.child.setGeometry(self.rect())
        if self.hints and self.child.hasHeightForWidth():
            self._sync()  # its height for the new width


def fenced(child: QtWidgets.QWidget, hints: bool = True) -> LayoutFence:
    """``child`` inside a new :class:`LayoutFence`, to add to a layout in its place."""
    return LayoutFence(child, hints=hints)
