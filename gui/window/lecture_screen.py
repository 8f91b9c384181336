"""Where a lecture's pages appear: the lecture bar above the main window (◀ Previous step, the heading,
settings and caption, Next step ▶) and, while Present mode is open, a heading above its map and the
caption below it, with the note's numbers as large as the caption where they fit."""

from __future__ import annotations

import html

from PySide6 import QtCore, QtGui, QtWidgets

from gui.state.lecture_pages import Page
from gui.widgets.fonts import WrappedLabel
from gui.window.lecture_text import caption_html, note_point_size

NOTE_MAX_HEIGHT = 0.25  # Present mode's note takes at most this part of the window's height (the map keeps the rest)
PRESENT_HELP = "→ ← / PgDn PgUp lecture step · ↓ ↑ decoder step · V view · L layer · H head · M mean · Esc leave"


class LectureScreen:
    """The lecture's texts on ``win`` (a MainWindow): :attr:`bar` (inserted above the window's
    contents; ``previous`` / ``following`` are its buttons' actions) with :attr:`bar_label`, and
    Present mode's heading and caption labels (:meth:`decorate`, for each new Present window).
    :attr:`fitted_size` is the Present window size the note's point size was last fitted to."""

    def __init__(self, win, title: str, previous, following) -> None:
        self.win, self.title = win, title
        self.decorated = None  # (present window, header label, caption label)
        self.fitted_size = QtCore.QSize()
        self.bar = QtWidgets.QWidget()
        row = QtWidgets.QHBoxLayout(self.bar)
        row.setContentsMargins(4, 2, 4, 2)
        back = QtWidgets.QPushButton("◀ Previous step (PgUp)")
        forward = QtWidgets.QPushButton("Next step (PgDn) ▶")
        # whole lines (heading and caption, at most three; all of it on hover): a plain wrapped label
        # in this row kept one line's height and cut the caption through its second line
        self.bar_label = WrappedLabel(max_lines=3, max_share=0.15)
        self.bar_label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.bar_label.setText(f"<b>Lecture · {html.escape(title)}</b>: loading the model …")
        back.clicked.connect(previous)
        forward.clicked.connect(following)
        row.addWidget(back)
        row.addWidget(self.bar_label, 1)
        row.addWidget(forward)
        win.outer_layout.insertWidget(0, self.bar)

    def show(self, page: Page) -> None:
        """``page``'s heading, settings and caption on the bar and, when Present mode is open, there."""
        self.decorate()
        head = f"<b>Lecture · {html.escape(page.heading)}</b>"
        settings = f"<span style='color:#555'>{html.escape(page.settings)}</span>"
        self.bar_label.setText(f"{head} &nbsp; {settings}<br>{caption_html(page)}")
        if self.decorated is not None:
            pw, header, text = self.decorated
            header.setText(f"{head} &nbsp; {settings}")
            largest = text.font().pointSize()  # the numbers as large as the caption where they fit across
            margins = pw.layout().contentsMargins()
            width = pw.width() - margins.left() - margins.right() - 8
            pt = note_point_size(page.note, text.font(), width, pw.height() * NOTE_MAX_HEIGHT, largest)
            text.setText(caption_html(page, pt))
            self.fitted_size = pw.size()

    def decorate(self) -> None:
        """Give Present mode's window (a new one each time it opens) the lecture's heading and caption."""
        pw = getattr(self.win, "present_window", None)
        if pw is None or (self.decorated is not None and self.decorated[0] is pw):
            return
        header, text = QtWidgets.QLabel(), QtWidgets.QLabel()
        for label in (header, text):
            label.setWordWrap(True)
            label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        small = QtGui.QFont(pw.font())
        small.setPointSize(max(pw.font().pointSize() - 6, 14))
        header.setFont(small)
        text.setFont(small)
        layout = pw.layout()
        layout.insertWidget(0, header)
        layout.insertWidget(layout.indexOf(pw.heatmap) + 1, text)
        pw.help.setText(PRESENT_HELP)
        header.setText(f"<b>Lecture · {html.escape(self.title)}</b>: loading the model …")
        self.decorated = (pw, header, text)


__all__ = ["LectureScreen", "NOTE_MAX_HEIGHT", "PRESENT_HELP"]
