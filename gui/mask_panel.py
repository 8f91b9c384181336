"""The masks the model used at the current step (bool, True = masked, drawn dark)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

MASK_LUT = np.array([[250, 250, 250], [90, 90, 90]], dtype=np.uint8)  # 0 = may attend, 1 = masked


class MaskView(pg.PlotWidget):
    """One boolean mask as an image (1 = masked), with token ticks."""

    def __init__(self, title: str, parent=None) -> None:
        super().__init__(parent)
        self.setMenuEnabled(False)
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        self.getPlotItem().invertY(True)
        self.setTitle(title)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setLookupTable(MASK_LUT)
        self.addItem(self.image)
        self.mask = np.zeros((0, 0), dtype=bool)

    def set_font(self, font: QtGui.QFont) -> None:
        for name in ("left", "bottom"):
            self.getAxis(name).setStyle(tickFont=font)

    def set_mask(self, mask: np.ndarray, row_tokens: list[str], col_tokens: list[str]) -> None:
        """``mask [rows, cols]`` bool; the image holds it as 0/1 floats."""
        self.mask = np.asarray(mask, dtype=bool)
        rows, cols = self.mask.shape
        if rows == 0 or cols == 0:
            self.image.clear()
        else:
            self.image.setImage(self.mask.astype(np.float32), levels=(0, 1), autoLevels=False)
            self.image.setRect(QtCore.QRectF(0, 0, cols, rows))
        self.getAxis("left").setTicks([[(i + 0.5, t) for i, t in enumerate(row_tokens)]])
        self.getAxis("bottom").setTicks([[(j + 0.5, t) for j, t in enumerate(col_tokens)]])
        self.setRange(QtCore.QRectF(0, 0, max(cols, 1), max(rows, 1)), padding=0)


class MaskPanel(QtWidgets.QWidget):
    """Causal mask [T, T], source key padding [1, S], target key padding [1, T] and the
    combined decoder self-attention mask [T, T] (causal OR target padding)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        layout = QtWidgets.QGridLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.causal = MaskView("causal mask [T, T]")
        self.src_padding = MaskView("source key padding [S]")
        self.tgt_padding = MaskView("target key padding [T]")
        self.combined = MaskView("causal ∨ tgt padding")
        layout.addWidget(self.causal, 0, 0)
        layout.addWidget(self.combined, 0, 1)
        layout.addWidget(self.src_padding, 1, 0, 1, 2)
        layout.addWidget(self.tgt_padding, 2, 0, 1, 2)
        layout.setRowStretch(0, 4)
        layout.setRowStretch(1, 1)
        layout.setRowStretch(2, 1)
        legend = QtWidgets.QLabel("dark = masked (True: may not attend) · light = may attend")
        legend.setAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(legend, 3, 0, 1, 2)

    def views(self) -> list[MaskView]:
        return [self.causal, self.combined, self.src_padding, self.tgt_padding]

    def set_font(self, font: QtGui.QFont) -> None:
        for v in self.views():
            v.set_font(font)

    def set_masks(self, causal: np.ndarray, src_kpm: np.ndarray, tgt_kpm: np.ndarray,
                  src_tokens: list[str], tgt_tokens: list[str]) -> None:
        """Masks as the model used them (True = masked)."""
        self.causal.set_mask(causal, tgt_tokens, tgt_tokens)
        self.combined.set_mask(causal | tgt_kpm[None, :], tgt_tokens, tgt_tokens)
        self.src_padding.set_mask(src_kpm[None, :], ["src"], src_tokens)
        self.tgt_padding.set_mask(tgt_kpm[None, :], ["tgt"], tgt_tokens)
