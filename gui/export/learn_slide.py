"""A lecture's learn step as a deck page (1920 × 1080, like :class:`gui.window.lecture_deck.LectureSlide`):
the heading, the probe pair and the model's output, the probe pair's cross-attention at the snapshot
shown (the run's end, in the deck) large on the right, a strip of earlier snapshots of the same run
on the left (update 0 first), the numbers, the caption and a footer. Rows are the target (decoder)
queries, columns the source keys."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from core.training.live_session import Snapshot
from gui.export.settle import settled_grab
from gui.state.lecture import LectureStep
from gui.state.lecture_learn_pages import learn_frame, strip_indices
from gui.state.lecture_pages import Page
from gui.widgets.heatmap import Heatmap

STRIP = 3  # earlier snapshots beside the last one


class LearnSlide(QtWidgets.QWidget):
    """One learn step's page; :meth:`show_page` fills it, :meth:`image` renders it.
    ``strip`` holds the small maps (left, oldest first), ``heatmap`` the large one."""

    def __init__(self, cmap, font_family: str = "", size: tuple[int, int] = (1920, 1080)) -> None:
        super().__init__()
        self.cmap = cmap
        self.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen)
        self.setAutoFillBackground(True)
        pal = self.palette()
        pal.setColor(QtGui.QPalette.ColorRole.Window, QtGui.QColor("white"))
        pal.setColor(QtGui.QPalette.ColorRole.WindowText, QtGui.QColor("#111111"))
        self.setPalette(pal)
        self.setFixedSize(*size)

        def font(pt: int, bold: bool = False) -> QtGui.QFont:
            f = QtGui.QFont(font_family) if font_family else QtGui.QFont()
            f.setPointSize(pt)
            f.setBold(bold)
            return f

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(36, 24, 36, 18)
        layout.setSpacing(6)
        self.heading, self.sentence, self.where = self._label(font(24, True)), self._label(font(21)), self._label(font(14))
        self.heatmap = Heatmap(cmap)
        self.heatmap.set_font(font(15))
        self.heatmap.set_show_values(True)
        self.strip = [Heatmap(cmap) for _ in range(STRIP)]
        column = QtWidgets.QVBoxLayout()
        for small in self.strip:
            small.set_font(font(10))
            column.addWidget(small, 1)
        body = QtWidgets.QHBoxLayout()
        body.addLayout(column, 1)
        body.addWidget(self.heatmap, 3)
        self.note = self._label(font(16))
        self.caption = self._label(font(18))
        self.caption.setStyleSheet("QLabel { background: #f3f3f0; padding: 10px; border-left: 6px solid #4a6fa5; }")
        self.footer = self._label(font(12))
        self.footer.setStyleSheet("QLabel { color: #555555; }")
        for w in (self.heading, self.sentence, self.where):
            layout.addWidget(w)
        layout.addLayout(body, 1)
        for w in (self.note, self.caption, self.footer):
            layout.addWidget(w)

    @staticmethod
    def _label(font: QtGui.QFont) -> QtWidgets.QLabel:
        label = QtWidgets.QLabel()
        label.setFont(font)
        label.setWordWrap(True)
        label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        return label

    def show_page(self, page: Page, step: LectureStep, snapshots: list[Snapshot], index: int) -> None:
        """Fill the page: ``page``'s texts, ``snapshots[index]`` large, the strip from the snapshots
        before it. Raises IndexError when ``index`` names no snapshot."""
        if not 0 <= index < len(snapshots):
            raise IndexError(f"snapshot {index} of {len(snapshots)}")
        self.heading.setText(page.heading)
        self.sentence.setText(page.sentence)
        self.where.setText(" · ".join(x for x in (page.where, page.settings) if x))
        self.note.setText(page.note)
        self.caption.setText(page.caption)
        self.caption.setVisible(bool(page.caption))
        self.footer.setText(
            f"Drawn: {page.drawn} · a small Transformer trained for this step"
            + f" · lecture step {page.number} / {page.total} · Attention Studio"
        )
        f = learn_frame(step, snapshots[index])
        self.heatmap.set_matrix(f.matrix, None, f.map.row_tokens, f.map.col_tokens, f.title, f.map.row_label, f.map.col_label)
        earlier = strip_indices(index + 1, len(self.strip))
        for small, i in zip(self.strip, [*earlier, *[None] * len(self.strip)]):
            small.setVisible(i is not None)
            if i is None:
                continue
            g = learn_frame(step, snapshots[i])
            title = f"update {snapshots[i].updates}: layer {g.key[0] + 1} head {g.key[1] + 1}"
            if g.scored:
                title += f", {g.hits}/{g.scored} rows right"
            small.set_matrix(g.matrix, None, g.map.row_tokens, g.map.col_tokens, title, "target", "source")

    def image(self) -> QtGui.QImage:
        """The page as an image of exactly the slide's size."""
        image = settled_grab(self).toImage()  # the axes size themselves as they paint: until that settles
        if image.size() != self.size():
            image = image.scaled(
                self.size(), QtCore.Qt.AspectRatioMode.IgnoreAspectRatio, QtCore.Qt.TransformationMode.SmoothTransformation
            )
        return image


__all__ = ["LearnSlide", "STRIP"]
