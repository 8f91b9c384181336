"""Read-only tables of the side tabs (teacher forcing, beam, ablation): one place for how they
are set up and how a cell's text is written."""

from __future__ import annotations

from PySide6 import QtWidgets


def read_only_table(headers: list[str], tooltip: str = "") -> QtWidgets.QTableWidget:
    """A table with ``headers`` as column titles, no row numbers, not editable, columns sized to
    their contents, and ``tooltip`` (none when empty)."""
    table = QtWidgets.QTableWidget(0, len(headers))
    table.setHorizontalHeaderLabels(headers)
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
    table.horizontalHeader().setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
    if tooltip:
        table.setToolTip(tooltip)
    return table


def set_texts(table: QtWidgets.QTableWidget, row: int, texts: list[str]) -> None:
    """Write ``texts`` into the cells of ``row`` (0-based), reusing the cells already there."""
    for j, text in enumerate(texts):
        item = table.item(row, j)
        if item is None:
            item = QtWidgets.QTableWidgetItem()
            table.setItem(row, j, item)
        item.setText(text)
