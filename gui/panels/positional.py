"""The positional encodings the model adds to its embeddings (§3.5): the ``[positions, d_model]``
matrix of the loaded model — sinusoidal (either layout) or the learned table — with the rows of
the current source or target tokens framed and labelled "position ⟨token⟩".

The matrix comes from :func:`core.analysis.inside.positional_matrix`, read once per loaded
checkpoint in the worker thread (the GUI never touches the model); the view shows its first rows.
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtGui, QtWidgets

from core.analysis.inside import positional_matrix
from gui.panels.pair_views import DETACH_TEXT
from gui.panels.worker_tab import WorkerTab
from gui.state.view_data import quote
from gui.widgets.colormap import Colormap
from gui.widgets.strips import PopOut, signed_levels
from gui.widgets.table_map import TableMap

SIDES = {"src": "source (encoder input)", "tgt": "target (decoder input, [BOS] first)"}
MARGIN = 8  # rows shown past the last token (unless "all positions" is ticked)
EDGE = (230, 120, 0)  # the lines around the current tokens' rows


def read_tables(ckpt) -> dict:
    """Worker side: both tables in full (``[max_len, d_model]`` float32) and their kind."""
    m = ckpt.model
    return {
        "positional": "positional",
        "kind": m.src_pos.kind,
        "max_len": m.src_pos.max_len,
        "src": positional_matrix(m, "src").numpy(),
        "tgt": positional_matrix(m, "tgt").numpy(),
    }


class PositionalPanel(WorkerTab):
    """The tab. ``matrix`` is the ``[n, d_model]`` array drawn (rows 0..n-1 of the table),
    ``tokens`` the current tokens whose rows are marked (position i = token i)."""

    name = "positional"
    tab_title = "Positional encoding"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.tables: dict | None = None
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.tokens: list[str] = []
        self._seen: tuple | None = None
        top = QtWidgets.QHBoxLayout()
        self.side = QtWidgets.QComboBox()
        self.side.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.side.setMinimumContentsLength(12)  # a long entry is elided: the tab fits the narrow dock
        for key, label in SIDES.items():
            self.side.addItem(label, key)
        self.all_rows = QtWidgets.QCheckBox("all positions")
        self.all_rows.setToolTip("every position up to the model's max_len, not only the current tokens and a few more")
        self.popout_button = QtWidgets.QPushButton(DETACH_TEXT)
        top.addWidget(QtWidgets.QLabel("Table:"))
        top.addWidget(self.side, 1)
        options = QtWidgets.QHBoxLayout()  # a second row: the tab fits a narrow dock
        options.addWidget(self.all_rows)
        options.addStretch(1)
        options.addWidget(self.popout_button)
        self.message = QtWidgets.QLabel("No model loaded yet.")
        self.message.setWordWrap(True)
        self.plots = TableMap(Colormap.named("CET-D1"), EDGE)  # learned tables: levels set per table
        self.plot, self.image, self.colorbar, self.band = self.plots.plot, self.plots.image, self.plots.colorbar, self.plots.band
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(top)
        layout.addLayout(options)
        layout.addWidget(self.message)
        layout.addWidget(self.plots, 1)
        self.plots.hide()
        self.popout = PopOut(ctx.tabs, self, self.tab_title)
        self.popout_button.clicked.connect(self.popout.toggle)
        self.side.currentIndexChanged.connect(lambda _: self.refresh())
        self.all_rows.toggled.connect(lambda _: self.refresh())
        ctx.worker.loaded.connect(self.load)

    def load(self, _ckpt=None) -> None:
        """A model was loaded: read its tables in the worker thread."""
        self.tables = None
        self.message.setText("reading the positional encodings …")
        self.ask(read_tables)

    def on_failed(self, reason: str) -> None:
        self.tables = None
        self.show_message(f"⚠ {reason}")

    def on_computed(self, value) -> None:
        if isinstance(value, dict) and value.get("positional"):
            self.tables = value
            self._seen = None
            self.refresh()

    def show_message(self, text: str) -> None:
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.message.setText(text)
        self.plots.hide()

    def refresh(self) -> None:
        """Redraw when the table, the side, the tokens or the font changed."""
        vm = self.ctx.vm
        side = self.side.currentData()
        r = vm.result
        tokens = [] if r is None else list(r.maps.src_tokens if side == "src" else r.maps.truncated(vm.step).tgt_tokens)
        key = (id(self.tables), side, tuple(tokens), self.all_rows.isChecked(), self.ctx.style.font.pointSize())
        if key == self._seen:
            return
        self._seen = key
        if self.tables is None:
            if self._tag is None:
                self.show_message("No model loaded yet.")
            return
        self.show_table(side, tokens)

    def show_table(self, side: str, tokens: list[str]) -> None:
        """Draw rows 0..n-1 of ``side``'s table, n = max_len (all) or the tokens + MARGIN."""
        t = self.tables
        full = t[side]
        n = t["max_len"] if self.all_rows.isChecked() else min(t["max_len"], max(len(tokens), 1) + MARGIN)
        tokens = tokens[:n]
        self.matrix, self.tokens = full[:n], tokens
        rows, d = self.matrix.shape
        levels = (-1.0, 1.0) if t["kind"] != "learned" else signed_levels(self.matrix)
        font = QtGui.QFont(self.ctx.style.font)
        what = (
            "learned table"
            if t["kind"] == "learned"
            else "sinusoids, Marian layout (sines, then cosines)"
            if t["kind"] == "sinusoidal_halves"
            else "sinusoids §3.5: PE(pos, 2i) = sin(pos/10000^(2i/d_model)), PE(pos, 2i+1) = cos(…)"
        )
        self.plots.set_table(
            self.matrix,
            levels,
            [f"{i} {quote(tok)}" for i, tok in enumerate(tokens)],
            font,
            left="position (marked: the current tokens)",
            bottom=f"feature of d_model (0 … {d - 1})",
            title=f"{SIDES[side]}: {what}",
        )
        note = "" if tokens else " No sentence yet: translate one to mark its tokens' rows."
        self.message.setText(
            f"Positions 0 … {rows - 1} of {t['max_len']} × d_model {d}; the {len(tokens)} current "
            f"tokens' rows are framed in orange (position i = token i).{note}"
        )
        self.plots.show()

    def npz_extra(self) -> dict[str, np.ndarray]:
        """For File → Export (.npz): ``positional_matrix`` ``[n, d_model]`` as drawn, the marked
        ``positional_tokens`` (position i = token i) and ``positional_what`` (side, kind).
        Empty before a model is loaded."""
        self.refresh()  # a hidden tab may still show an earlier sentence's tokens
        if self.matrix.size == 0 or self.tables is None:
            return {}
        return {
            "positional_matrix": self.matrix,
            "positional_tokens": np.array(self.tokens, dtype=str),
            "positional_what": np.array([self.side.currentData(), self.tables["kind"]]),
        }
