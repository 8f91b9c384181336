"""The masks the model was GIVEN up to the current step (bool, True = masked), drawn as binary
images with a two-colour legend; a key the KV cache had not computed yet is hatched white
(neither masked nor visible: it did not exist). Nothing here is rebuilt from token ids."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from gui.widgets.labels import no_si_prefix, token_axes, wrap_title
from gui.widgets.map_style import LEGEND, MASKED_RGB, OPEN_RGB, hatch_size, hatch_stripes
from gui.widgets.pg_config import no_background_cache
from gui.widgets.thumbnails import DrawsColours, bgra_of, rgba_words

# a mask image's colours (RGBA as one uint32 each): white (absent key or any other value), masked, open, hatch stripe
_MASK_WORDS = (
    np.array([[255, 255, 255, 255], [*MASKED_RGB, 255], [*OPEN_RGB, 255], [175, 175, 175, 255]], dtype=np.uint8)
    .view(np.uint32)
    .ravel()
)


def mask_rgba(image: np.ndarray) -> np.ndarray:
    """RGBA ``[rows·h, cols·h, 4]`` (h: :func:`hatch_size`, 4 to 24) for a mask image (1 = masked, 0 = may attend, NaN = key not
    computed yet: white with a grey hatch)."""

    img = np.asarray(image, dtype=np.float32)
    h = hatch_size(*img.shape)
    shade = np.where(img == 1, 1, np.where(img == 0, 2, 0)).astype(np.uint8)  # 0 absent (or other), 1 masked, 2 open
    big = np.repeat(np.repeat(shade, h, 0), h, 1)
    absent = np.isnan(img)
    if absent.any():  # absent keys: white, grey on the hatch's stripes
        big[(big == 0) & hatch_stripes(*big.shape) & np.repeat(np.repeat(absent, h, 0), h, 1)] = 3
    return np.take(_MASK_WORDS, big).view(np.uint8).reshape(*big.shape, 4)  # one 4-byte gather per pixel


_UNIT = QtCore.QRectF(0, 0, 1, 1)  # a mask view's range: the image fills it whatever the mask's shape


class OpaqueImage(DrawsColours, pg.ImageItem):
    """An ImageItem for an opaque RGBA uint8 image ``[rows, cols, 4]`` (alpha 255 everywhere, as
    :func:`mask_rgba` makes), drawn as RGB32: Qt scales that about three times faster than the
    RGBA8888 pyqtgraph makes of it. Any other image is drawn as pyqtgraph draws it."""

    def render(self) -> None:
        words = rgba_words(self.image)
        if words is None or not (words >= 0xFF000000).all():  # alpha (the high byte) 255 everywhere
            return super().render()
        self.show_colours(bgra_of(words), bgra=True)
        return None


class MaskView(pg.PlotWidget):
    """One mask image with token ticks. ``mask``: bool ``[rows, cols]`` (True = masked);
    ``present``: bool, False where the key was not computed yet. The view's range is ``[0, 1]²``
    whatever the shape: cell (r, c) covers ``[c / cols, (c + 1) / cols] × [r / rows, (r + 1) / rows]``."""

    MIN_LINES = 4.5  # minimum height in text lines (title, cells, tick labels): scroll, never collapse

    def __init__(self, title: str, parent=None) -> None:
        super().__init__(parent, axisItems=token_axes("left", "bottom"), enableMenu=False)  # no menu built at all
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        self.getPlotItem().invertY(True)
        no_si_prefix(self.getPlotItem())
        no_background_cache(self)
        self.title = title
        self.image = OpaqueImage(axisOrder="row-major")
        self.addItem(self.image)
        self.getPlotItem().getViewBox().sigResized.connect(lambda *_: self._title_wrap())
        self.mask = np.zeros((0, 0), dtype=bool)
        self.present = np.zeros((0, 0), dtype=bool)
        self._shown: tuple | None = None  # what set_mask last drew (shape, bytes, ticks, title)
        self.font = QtGui.QFont()
        self.set_font(self.font)
        for name in ("left", "bottom"):
            self.hideAxis(name)  # nothing meaningful before the first result
        # The view always spans [0, 1]²: the image is scaled into it and a token's tick sits at its
        # cell's centre, (i + 0.5) / n. A range that followed the mask's shape changed at every step
        # (T grows) and cost pyqtgraph's range bookkeeping and signals each time.
        self.setRange(QtCore.QRectF(0, 0, 1, 1), padding=0)

    def set_font(self, font: QtGui.QFont) -> None:
        self.font = QtGui.QFont(font)
        self._shown = None
        for name in ("left", "bottom"):
            self.getAxis(name).setStyle(tickFont=font)
        self._title()
        line = QtGui.QFontMetrics(font).height()
        self.setMinimumHeight(int(self.MIN_LINES * line + 12))
        self.setMinimumWidth(14 * QtGui.QFontMetrics(font).averageCharWidth())

    def _title(self) -> None:
        self.setTitle(self.title, size=f"{self.font.pointSize()}pt")
        self._title_wrap()

    def _title_wrap(self) -> None:
        view = self.getPlotItem().getViewBox()
        wrap_title(self.getPlotItem().titleLabel, view.width() if view.width() > 10 else self.width() - 20)

    def set_mask(self, image: np.ndarray, row_tokens: list[str], col_tokens: list[str], title: str | None = None) -> None:
        """``image [rows, cols]``: 1 = masked, 0 = may attend, NaN = key not computed yet."""
        img = np.asarray(image, dtype=np.float32)
        key = (img.shape, img.tobytes(), tuple(row_tokens), tuple(col_tokens), title)
        if key == self._shown:  # the same mask again (e.g. the encoder's at every decoder step): keep it
            return
        self._shown = key
        self.mask = img == 1
        self.present = ~np.isnan(img)
        if title is not None:
            self.title = title
            self._title()
        rows, cols = img.shape
        for name in ("left", "bottom"):
            self.showAxis(name)
        if rows == 0 or cols == 0:
            self.image.clear()
        else:
            self.image.setImage(mask_rgba(img), autoLevels=False)
            self.image.setRect(_UNIT)
        self.getAxis("left").setTicks([[((i + 0.5) / max(rows, 1), t) for i, t in enumerate(row_tokens)]])
        self.getAxis("bottom").setTicks([[((j + 0.5) / max(cols, 1), t) for j, t in enumerate(col_tokens)]])


class MaskPanel(QtWidgets.QScrollArea):
    """The decoder self-attention mask given per query row ``[T, T]``, the cross-attention mask
    given ``[T, S]``, the encoder's key mask given ``[S]`` and the target key padding input
    ``[T]``. Scrolls when the window is too small, so no view collapses to a strip."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        inner = QtWidgets.QWidget()
        layout = QtWidgets.QGridLayout(inner)
        layout.setContentsMargins(0, 0, 0, 0)
        self.decoder_self = MaskView("decoder self mask given [T, T]")
        self.cross = MaskView("cross-attention mask given [T, S]")
        self.encoder = MaskView("encoder key mask given [S]")
        self.tgt_padding = MaskView("target key padding input [T]")
        for v in (self.encoder, self.tgt_padding):
            v.MIN_LINES = 3.5
            v.set_font(v.font)
        layout.addWidget(self.decoder_self, 0, 0)
        layout.addWidget(self.cross, 0, 1)
        layout.addWidget(self.encoder, 1, 0)
        layout.addWidget(self.tgt_padding, 1, 1)
        layout.setRowStretch(0, 3)
        layout.setRowStretch(1, 1)
        self.note = QtWidgets.QLabel("")
        self.note.setWordWrap(True)
        layout.addWidget(self.note, 2, 0, 1, 2)
        self.setWidget(inner)

    def views(self) -> list[MaskView]:
        return [self.decoder_self, self.cross, self.encoder, self.tgt_padding]

    def set_font(self, font: QtGui.QFont) -> None:
        for v in self.views():
            v.set_font(font)

    def set_masks(self, masks: dict[str, np.ndarray], src_tokens: list[str], tgt_tokens: list[str]) -> None:
        """``masks`` from :func:`gui.state.view_data.masks_at` (the masks given, True = masked)."""
        from gui.state.view_data import mask_state

        given = masks["decoder_self_given"]
        self.decoder_self.set_mask(mask_state(masks["decoder_self"], masks["decoder_keys"]), tgt_tokens, tgt_tokens)
        self.cross.set_mask(mask_state(masks["cross"]), tgt_tokens, src_tokens)
        enc_title = "encoder key mask given [S]" if masks["encoder_given"] else "encoder key mask: none given (no padding)"
        self.encoder.set_mask(mask_state(masks["encoder"][None, :]), ["enc"], src_tokens, enc_title)
        self.tgt_padding.set_mask(mask_state(masks["tgt_key_padding"][None, :]), ["tgt"], tgt_tokens)
        cached = not masks["decoder_keys"].all()
        if not masks["recorded"]:
            note = "⚠ this result did not record the masks the model was given"
        elif cached and not given.any():
            note = (
                "Cached decoding: each step is one new query on the KV cache; the model was given "
                "no self-attention mask (later keys did not exist yet: hatched)."
            )
        elif cached:
            note = (
                "Cached decoding with target padding: each step was given a key padding mask; "
                "later keys did not exist yet (hatched)."
            )
        elif given.all():
            note = "One parallel pass over the whole target: the model was given these masks for every row."
        else:
            note = "One parallel pass with no self-attention mask given (causal mask OFF): every key visible."
        self.note.setText(f"{LEGEND}<br>{note}")
