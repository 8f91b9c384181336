"""What every deck page shares (:class:`gui.window.lecture_deck.LectureSlide`,
:class:`gui.export.learn_slide.LearnSlide`): a white offscreen page of a fixed size (1920 × 1080),
its fonts, the heading / sentence / where lines at the top, a caption box and a footer, the page's
header and footer texts filled from a :class:`gui.state.lecture_pages.Page`, and the page rendered
as an image once its layout settled."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from gui.export.settle import settled_grab
from gui.state.lecture_pages import Page

DECK_SIZE = (1920, 1080)  # px
CAPTION_STYLE = "QLabel { background: #f3f3f0; padding: 10px; border-left: 6px solid #4a6fa5; }"


class SlidePage(QtWidgets.QWidget):
    """A page's frame. Subclasses add their body between the top lines and the bottom ones with
    :meth:`finish_layout`. ``heading``, ``sentence``, ``where``, ``caption``, ``footer``: QLabels."""

    def __init__(self, font_family: str = "", size: tuple[int, int] = DECK_SIZE) -> None:
        super().__init__()
        self.font_family = font_family
        self.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen)
        self.setAutoFillBackground(True)
        pal = self.palette()
        pal.setColor(QtGui.QPalette.ColorRole.Window, QtGui.QColor("white"))
        pal.setColor(QtGui.QPalette.ColorRole.WindowText, QtGui.QColor("#111111"))
        self.setPalette(pal)
        self.setFixedSize(*size)
        self.page_layout = QtWidgets.QVBoxLayout(self)
        self.page_layout.setContentsMargins(36, 24, 36, 18)
        self.page_layout.setSpacing(6)
        self.heading, self.sentence, self.where = self.label(24, True), self.label(21), self.label(14)
        self.caption = self.label(18)
        self.caption.setStyleSheet(CAPTION_STYLE)
        self.footer = self.label(12)
        self.footer.setStyleSheet("QLabel { color: #555555; }")

    def font_of(self, pt: int, bold: bool = False) -> QtGui.QFont:
        """The page's font family at ``pt`` points."""
        f = QtGui.QFont(self.font_family) if self.font_family else QtGui.QFont()
        f.setPointSize(pt)
        f.setBold(bold)
        return f

    def label(self, pt: int, bold: bool = False) -> QtWidgets.QLabel:
        """A word-wrapped plain-text label in the page's font at ``pt`` points."""
        label = QtWidgets.QLabel()
        label.setFont(self.font_of(pt, bold))
        label.setWordWrap(True)
        label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        return label

    def finish_layout(self, body: QtWidgets.QLayout, *below: QtWidgets.QWidget) -> None:
        """Lay the page out: the top lines, ``body`` (all the height left), ``below`` in order,
        then the caption and the footer."""
        for w in (self.heading, self.sentence, self.where):
            self.page_layout.addWidget(w)
        self.page_layout.addLayout(body, 1)
        for w in (*below, self.caption, self.footer):
            self.page_layout.addWidget(w)

    def show_texts(self, page: Page, footer: str) -> None:
        """The heading, sentence, where / settings line, caption (red-edged for a step that
        failed) and ``footer`` of ``page``."""
        self.heading.setText(page.heading)
        self.sentence.setText(page.sentence)
        self.where.setText(" · ".join(x for x in (page.where, page.settings) if x))
        self.caption.setText(page.caption)
        self.caption.setVisible(bool(page.caption))
        self.caption.setStyleSheet(CAPTION_STYLE.replace("#4a6fa5", "#b00020") if page.error else CAPTION_STYLE)
        self.footer.setText(footer)

    def image(self) -> QtGui.QImage:
        """The page as an image of exactly the page's size."""
        image = settled_grab(self).toImage()  # the axes size themselves as they paint: until that settles
        if image.size() != self.size():
            image = image.scaled(
                self.size(), QtCore.Qt.AspectRatioMode.IgnoreAspectRatio, QtCore.Qt.TransformationMode.SmoothTransformation
            )
        return image
