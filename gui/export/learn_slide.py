"""A lecture's learn step as a deck page (1920 × 1080, like :class:`gui.window.lecture_deck.LectureSlide`):
the heading, the probe pair and the model's output, the probe pair's cross-attention at the snapshot
shown (the run's end, in the deck) large on the right, a strip of earlier snapshots of the same run
on the left (update 0 first), the numbers, the caption and a footer. Rows are the target (decoder)
queries, columns the source keys."""

from __future__ import annotations

from PySide6 import QtWidgets

from core.training.live_session import Snapshot
from gui.export.slide_page import DECK_SIZE, SlidePage
from gui.state.lecture import LectureStep
from gui.state.lecture_learn_pages import learn_frame, strip_indices
from gui.state.lecture_pages import Page
from gui.widgets.heatmap import Heatmap

STRIP = 3  # earlier snapshots beside the last one


class LearnSlide(SlidePage):
    """One learn step's page; :meth:`show_page` fills it, :meth:`image` renders it.
    ``strip`` holds the small maps (left, oldest first), ``heatmap`` the large one."""

    def __init__(self, cmap, font_family: str = "", size: tuple[int, int] = DECK_SIZE) -> None:
        super().__init__(font_family, size)
        self.cmap = cmap
        self.heatmap = Heatmap(cmap)
        self.heatmap.set_font(self.font_of(15))
        self.heatmap.set_show_values(True)
        self.strip = [Heatmap(cmap) for _ in range(STRIP)]
        column = QtWidgets.QVBoxLayout()
        for small in self.strip:
            small.set_font(self.font_of(10))
            column.addWidget(small, 1)
        body = QtWidgets.QHBoxLayout()
        body.addLayout(column, 1)
        body.addWidget(self.heatmap, 3)
        self.note = self.label(16)
        self.finish_layout(body, self.note)

    def show_page(self, page: Page, step: LectureStep, snapshots: list[Snapshot], index: int) -> None:
        """Fill the page: ``page``'s texts, ``snapshots[index]`` large, the strip from the snapshots
        before it. Raises IndexError when ``index`` names no snapshot."""
        if not 0 <= index < len(snapshots):
            raise IndexError(f"snapshot {index} of {len(snapshots)}")
        self.show_texts(
            page,
            f"Drawn: {page.drawn} · a small Transformer trained for this step"
            + f" · lecture step {page.number} / {page.total} · Attention Studio",
        )
        self.note.setText(page.note)
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
