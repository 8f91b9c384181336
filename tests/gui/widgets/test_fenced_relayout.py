"""A fenced widget re-lays out its parent only when its sizes change, and still gets the room it needs."""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from gui.widgets.fence import fenced
from gui.widgets.fonts import WrappedLabel


class Counting(QtWidgets.QWidget):
    """A parent that counts the layout requests it receives."""

    def __init__(self) -> None:
        super().__init__()
        self.requests = 0

    def event(self, ev) -> bool:
        if ev.type() == QtCore.QEvent.Type.LayoutRequest:
            self.requests += 1
        return super().event(ev)


def test_same_size_text_changes_stop_at_the_fence_and_a_longer_text_gets_its_width(qtbot):
    parent = Counting()
    qtbot.addWidget(parent)
    row = QtWidgets.QHBoxLayout(parent)
    row.addWidget(QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal), 1)
    label = QtWidgets.QLabel("step 10 / 40")
    fence = fenced(label)
    row.addWidget(fence)
    parent.resize(400, 40)
    parent.show()
    qtbot.waitExposed(parent)
    QtWidgets.QApplication.processEvents()
    before = parent.requests
    for k in range(11, 20):  # same digit count: the same width
        label.setText(f"step {k} / 40")
        QtWidgets.QApplication.processEvents()
    assert fence.held >= 9 and parent.requests == before
    label.setText("step 1,000 of a much longer run / 40,000")
    QtWidgets.QApplication.processEvents()
    qtbot.waitUntil(lambda: label.width() >= label.sizeHint().width())
    assert fence.passed >= 1 and label.geometry() == fence.rect()


def test_a_wrapped_label_that_needs_more_lines_still_grows_its_row(qtbot):
    parent = QtWidgets.QWidget()
    qtbot.addWidget(parent)
    col = QtWidgets.QVBoxLayout(parent)
    label = WrappedLabel("<b>Translation:</b> short")
    col.addWidget(fenced(label, hints=False))
    col.addStretch(1)
    parent.resize(200, 400)
    parent.show()
    qtbot.waitExposed(parent)
    QtWidgets.QApplication.processEvents()
    one_line = label.height()
    label.setText("<b>Translation:</b> " + "a long translation that wraps " * 4)
    qtbot.waitUntil(lambda: label.height() >= label.minimumHeight() > one_line)
    assert label.height() >= 3 * one_line - 4  # several wrapped lines shown, not cut to one
