"""Present mode's note (an experiment's numbers under the map) is as large as the caption where it
fits the window, and shrinks, never below NOTE_MIN_PT, where a wide table would not."""

from __future__ import annotations

from PySide6 import QtCore, QtGui

from gui.window.lecture_text import NOTE_MIN_PT, note_html, note_point_size

TABLE = "query 6 ▁by · layer 4, head 1 · d_k = 64\nkey\tq·k/√d_k\tweight\n" + "\n".join(
    f"▁토큰{i}\t{i * 0.37 - 2:.2f}\t{0.01 * i:.3f}" for i in range(12)
)


def _size(note: str, pt: int, width: float | None = None) -> QtGui.QSizeF:
    """The note's size at ``pt``, wrapped at ``width`` (None: unwrapped), measured one size at a time."""
    doc = QtGui.QTextDocument()
    doc.setDocumentMargin(0)
    font = QtGui.QFont()
    font.setPointSize(pt)
    doc.setDefaultFont(font)
    doc.setHtml(note_html(note, across=True))
    if width is not None:
        doc.setTextWidth(width)
    return QtCore.QSizeF(doc.idealWidth(), doc.size().height()) if width is None else doc.size()


def test_a_note_that_fits_keeps_the_caption_size(qapp):
    assert note_point_size(TABLE, QtGui.QFont(), 4000, 4000, 16) == 16
    assert note_point_size("", QtGui.QFont(), 10, 10, 16) == 16  # no note: nothing to fit


def test_a_wide_table_shrinks_to_the_largest_size_that_fits(qapp):
    table = TABLE.split("\n", 1)[1]  # the tab-separated lines alone
    width = _size(table, 13).width() + 1  # room for the table unwrapped at 13 pt
    pt = note_point_size(TABLE, QtGui.QFont(), width, 4000, 16)
    assert pt == 13  # its width grows with the size: 14 pt is wider
    assert _size(table, 14).width() > width


def test_a_long_paragraph_wraps_instead_of_shrinking_but_not_past_the_height(qapp):
    line = "mean NLL 1.361 nats/token · perplexity 3.90 · causal mask OFF (the decoder sees the future) " * 3
    assert note_point_size(line, QtGui.QFont(), 600, 4000, 16) == 16  # wraps at 600 px, any height
    budget = (_size(line, 13, 600).height() + _size(line, 14, 600).height()) / 2  # room for 13 pt, not 14
    assert _size(line, 13, 600).height() < _size(line, 14, 600).height()
    assert note_point_size(line, QtGui.QFont(), 600, budget, 16) == 13
    assert note_point_size(TABLE, QtGui.QFont(), 50, 4000, 16) == NOTE_MIN_PT  # nothing fits: the floor
