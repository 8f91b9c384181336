"""A lecture rendered as a deck (numbered PNGs, one PDF, ``captions.md``), and ``main.py --lecture``:
the lecture in Present mode, or with ``--deck OUT`` every step rendered offscreen into OUT."""

from __future__ import annotations

import time
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from core.errors import StudioError
from gui.export.learn_slide import LearnSlide
from gui.export.slide_page import DECK_SIZE, SlidePage
from gui.state.lecture import Lecture
from gui.state.lecture_pages import Page, page_markdown
from gui.widgets.heatmap import Heatmap
from gui.window.lecture import LectureDriver, open_lecture
from gui.window.lecture_text import note_html
from gui.window.present import show_presented


class LectureSlide(SlidePage):
    """One deck page, 1920 × 1080: the heading, the sentence and step, the map (most of the page,
    what Present mode shows: :class:`gui.state.view_spec.ViewFrame`), the experiment's numbers
    beside it, the caption, and a footer naming what is drawn."""

    def __init__(self, cmap, font_family: str = "", size: tuple[int, int] = DECK_SIZE) -> None:
        super().__init__(font_family, size)
        self.cmap = cmap
        self.heatmap = Heatmap(cmap)
        self.heatmap.set_font(self.font_of(15))
        self.heatmap.set_show_values(True)
        self.note = self.label(15)
        self.note.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.note.setFixedWidth(size[0] * 3 // 10)
        self.note.setAlignment(QtCore.Qt.AlignmentFlag.AlignTop | QtCore.Qt.AlignmentFlag.AlignLeft)
        self.blank = self.label(18)
        self.blank.setAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
        self.blank.setText("(nothing drawn: see the caption)")
        self.blank.setStyleSheet("QLabel { color: #777777; }")
        self.note_below = self.label(18)  # what the caption quotes (ablated output, NLL, beam scores): as large
        self.note_below.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.note_below.setStyleSheet("QLabel { color: #222222; }")
        body = QtWidgets.QHBoxLayout()
        body.addWidget(self.heatmap, 1)
        body.addWidget(self.blank, 1)
        body.addWidget(self.note, 0)
        self.finish_layout(body, self.note_below)

    def show_page(self, page: Page, vm, model: str = "", scale: str = "fixed") -> None:
        """Fill the page from ``page`` and the map of the view model ``vm`` (None: no map)."""
        self.show_texts(
            page,
            f"Drawn: {page.drawn}"
            + (f" · model {model}" if model else "")
            + f" · lecture step {page.number} / {page.total} · Attention Studio",
        )
        table = "\t" in page.note  # a table (the inside of a step) stands beside the map, lines go under it
        self.note.setText(note_html(page.note) if table else "")
        self.note.setVisible(table)
        self.note_below.setText("" if table else note_html(page.note))
        self.note_below.setVisible(bool(page.note) and not table)
        frame = None if page.error or vm is None else vm.frame()
        spec = None if frame is None else frame.enlarged
        self.heatmap.set_scale(scale)
        self.heatmap.setVisible(spec is not None)
        self.blank.setVisible(spec is None)
        if spec is None:
            return
        show_presented(self.heatmap, spec, self.cmap)


def wait_until(done, timeout_s: float, what: str) -> None:
    """Process events until ``done()`` (the deck's steps run in the window's worker). Raises
    ValueError after ``timeout_s`` seconds."""
    app = QtWidgets.QApplication.instance()
    end = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > end:
            raise ValueError(f"{what}: no answer within {timeout_s:.0f} s")
        app.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 50)
        time.sleep(0.002)


def render_deck(
    win, lecture: Lecture, out: Path | str, size: tuple[int, int] = DECK_SIZE, timeout_s: float = 180.0, model: str = ""
) -> list[Path]:
    """Run every step of ``lecture`` on ``win`` (its model loaded) and write ``step-01.png`` …
    (``size``), ``<lecture>.pdf`` (one page per step) and ``captions.md`` into ``out``; returns
    the files written. A step with problems becomes a page that shows them. Raises ValueError when
    a step gets no answer within ``timeout_s`` or a file cannot be written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    driver = LectureDriver(win, lecture, interactive=False)
    slide = LectureSlide(win.cmap, win.font_family, size)
    slide.show()
    learn_slide: LearnSlide | None = None  # a learn step's page (made at the first)
    stem = lecture.path.stem if lecture.path is not None else "lecture"
    pdf_path = out / f"{stem}.pdf"
    writer = QtGui.QPdfWriter(str(pdf_path))
    writer.setTitle(lecture.title)
    writer.setCreator("Attention Studio")
    writer.setResolution(96)
    writer.setPageSize(QtGui.QPageSize(QtCore.QSizeF(size[0] * 0.75, size[1] * 0.75), QtGui.QPageSize.Unit.Point, "slide"))
    writer.setPageMargins(QtCore.QMarginsF(0, 0, 0, 0))
    painter = QtGui.QPainter()
    written: list[Path] = []
    markdown = [
        f"# {lecture.title}",
        "",
        f"{len(lecture.steps)} steps"
        + (f" on the model {model}" if model else "")
        + f"; the PDF is [{pdf_path.name}]({pdf_path.name}).",
        "",
    ]
    try:
        for i in range(len(lecture.steps)):
            driver.go(i)
            wait_until(lambda: driver.done, timeout_s, f"lecture step {i + 1}")
            page = driver.page
            if driver.learning.step is not None and not page.error:  # the run's last snapshot and a strip before it
                learn_slide = learn_slide or LearnSlide(win.cmap, win.font_family, size)
                learn_slide.show()
                learn_slide.show_page(page, driver.step, driver.learning.snapshots, driver.learning.index)
                image = learn_slide.image()
            else:
                slide.show_page(page, None if page.error else win.vm, model, win.heatmap.scale)
                image = slide.image()
            png = out / f"step-{i + 1:02d}.png"
            if not image.save(str(png)):
                raise ValueError(f"could not write {png}")
            written.append(png)
            if i == 0:
                if not painter.begin(writer):
                    raise ValueError(f"could not write {pdf_path}")
            elif not writer.newPage():
                raise ValueError(f"could not add page {i + 1} to {pdf_path}")
            target = painter.viewport()
            painter.drawImage(QtCore.QRect(0, 0, target.width(), target.height()), image)
            markdown.append(page_markdown(page, png.name))
    finally:
        if painter.isActive():
            painter.end()
        slide.close()
        if learn_slide is not None:
            learn_slide.close()
        driver.detach()
        driver.deleteLater()
    written.append(pdf_path)
    md = out / "captions.md"
    try:
        md.write_text("\n".join(markdown), encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"could not write {md}: {exc}") from None
    written.append(md)
    return written


def run_from_command_line(app, win, lecture: Lecture, args) -> int:
    """``main.py --lecture FILE``: ``win`` on the lecture in Present mode (runs the event loop),
    or with ``--deck OUT`` every step rendered offscreen into OUT; returns the exit status (2 with
    one ``error:`` line when the model or a step fails)."""
    import sys

    from core.checkpoints.checkpoint import load_checkpoint

    if args.deck is None:
        win.show()
        driver = open_lecture(win, lecture)  # noqa: F841 - lives as long as the event loop
        win.load_checkpoint(args.checkpoint, args.device, args.precision)
        return app.exec()
    t0 = time.perf_counter()
    try:
        ckpt = load_checkpoint(args.checkpoint, device=args.device, precision=args.precision)
        win.use_checkpoint(ckpt)
        win.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen)  # shown (its tabs work), never on screen
        win.show()
        files = render_deck(win, lecture, args.deck, model=ckpt.name)
    except (StudioError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        win.close()
    pngs = [f for f in files if f.suffix == ".png"]
    others = ", ".join(f.name for f in files if f.suffix != ".png")
    print(
        f"saved {len(pngs)} pages to {args.deck}: {pngs[0].name} … {pngs[-1].name}, {others} ({time.perf_counter() - t0:.1f} s)"
    )
    return 0


__all__ = ["DECK_SIZE", "LectureSlide", "render_deck", "run_from_command_line", "wait_until"]
