"""A lecture page's caption and note as rich text, for the lecture bar, Present mode and the deck:
the note's tab-separated lines (an experiment's numbers) become a table, its other lines paragraphs."""

from __future__ import annotations

import html

from gui.state.lecture import Page


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
            cells = "".join(f"<{'th' if across and j == 0 else tag} align='{'left' if j == 0 else 'right'}'>"
                            f"{html.escape(c)}</{'th' if across and j == 0 else tag}>" for j, c in enumerate(r))
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
