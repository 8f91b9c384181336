"""A lecture page's caption and note as rich text, for the lecture bar, Present mode and the deck:
the note's tab-separated lines (an experiment's numbers) become a table, its other lines paragraphs."""

from __future__ import annotations

import html

from PySide6 import QtGui

from gui.state.lecture_pages import Page

NOTE_MIN_PT = 12  # Present mode's note (an experiment's numbers) shrinks to fit its width, never below this


def note_html(note: str, across: bool = False) -> str:
    """A page's note as HTML: lines with tabs become the rows of a table (the first one its
    header; ``across``: transposed, one column per key, for the narrow strip under Present
    mode's map), the other lines paragraphs."""
    out, rows = [], []

    def flush() -> None:
        if not rows:
            return
        table = [list(col) for col in zip(*rows)] if across else list(rows)
        html_rows = []
        for i, r in enumerate(table):
            tag = "th" if (i == 0 and not across) else "td"
            cells = "".join(
                f"<{'th' if across and j == 0 else tag} align='{'left' if j == 0 else 'right'}'>"
                f"{html.escape(c)}</{'th' if across and j == 0 else tag}>"
                for j, c in enumerate(r)
            )
            html_rows.append(f"<tr>{cells}</tr>")
        out.append("<table cellspacing='0' cellpadding='5'>" + "".join(html_rows) + "</table>")
        rows.clear()

    for line in note.splitlines():
        if "\t" in line:
            rows.append(line.split("\t"))
            continue
        flush()
        out.append(f"<p>{html.escape(line)}</p>")
    flush()
    return "".join(out)


def caption_html(page: Page, note_pt: int = 0) -> str:
    if page.error:
        return f"<span style='color:#b00020'>{html.escape(page.caption)}</span>".replace("\n", "<br>")
    text = html.escape(page.caption).replace("\n", "<br>")
    if page.note:
        size = f" font-size:{note_pt}pt;" if note_pt else ""
        text += f"<div style='color:#444;{size}'>{note_html(page.note, across=True)}</div>"
    return text


def _tables(note: str) -> list[str]:
    """The note's tables: each run of consecutive tab-separated lines, as its own note."""
    runs, cur = [], []
    for line in note.splitlines() + [""]:
        if "\t" in line:
            cur.append(line)
        elif cur:
            runs.append("\n".join(cur))
            cur = []
    return runs


def note_point_size(note: str, font: QtGui.QFont, width: float, height: float, largest: int, smallest: int = NOTE_MIN_PT) -> int:
    """The largest point size from ``largest`` down to ``smallest`` at which ``note`` (as Present
    mode draws it: :func:`note_html` with ``across``) in ``font``'s family fits: every table no
    wider than ``width`` px unwrapped (numbers and tokens are never broken), and the whole note,
    its lines wrapped at ``width``, no taller than ``height`` px. ``smallest`` when none fits.
    A bisection over sizes (widths and heights grow with the size)."""
    if not note or largest <= smallest:
        return largest
    docs = []
    for part in _tables(note) + [note]:
        doc = QtGui.QTextDocument()
        doc.setDocumentMargin(0)
        doc.setHtml(note_html(part, across=True))
        docs.append(doc)
    docs[-1].setTextWidth(width)  # the whole note, wrapped: its height

    def fits(pt: int) -> bool:
        sized = QtGui.QFont(font)
        sized.setPointSize(pt)
        for doc in docs:
            doc.setDefaultFont(sized)
        return all(doc.idealWidth() <= width for doc in docs[:-1]) and docs[-1].size().height() <= height

    lo, hi = smallest, largest
    if fits(hi):
        return hi
    while lo < hi - 1:  # invariant: hi does not fit; lo fits or is the floor
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo
