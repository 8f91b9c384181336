"""Presentation mode (F11 or View → Present): one map full-screen with large fonts.

Keys: V / Shift+V next / previous view kind, L / Shift+L layer, H / Shift+H head, M the mean over
heads of the current layer (a derived cell; H or M again goes back to a head), → / ← step, Esc or
F11 leaves. The window follows the main window's view model (a change callback), and draws
:class:`gui.state.view_spec.ViewFrame`, so what it shows is always what the main window
enlarges, a derived cell (layer mean, encoder rollout) included."""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from gui.state import view_kinds
from gui.state.view_spec import MapSpec
from gui.widgets.heatmap import Heatmap
from gui.widgets.map_style import MASK_CMAP

PRESENT_EXTRA = 11  # points over the main window's font: 22 pt at the default 11
TICK_MIN_PT = 12  # token labels shrink down to this size before any is left out (smaller is unreadable from a room)
HELP = "V view · L layer · H head (Shift = back) · M layer mean · ← → step · Esc leave"


def show_presented(heatmap: Heatmap, spec: MapSpec, cmap) -> None:
    """Draw a view frame's enlarged map ``spec`` as a presenter sees it (Present mode, deck pages):
    a mask picture in the mask colours, else the weights in ``cmap``, under the title that
    names the layer and head (no grid beside it to count on)."""
    if spec.mask_picture:
        heatmap.set_colormap(MASK_CMAP)
        heatmap.set_mask_matrix(spec.matrix, spec.row_tokens, spec.col_tokens, spec.presenter_title)
        return
    heatmap.set_colormap(cmap)
    matrix = np.asarray(spec.matrix)
    heatmap.set_matrix(matrix, spec.mask, spec.row_tokens, spec.col_tokens, spec.presenter_title, spec.row_label, spec.col_label)


class PresentWindow(QtWidgets.QWidget):
    """One enlarged map of ``win`` (a MainWindow). Fonts are ``win.font_size + PRESENT_EXTRA``
    points (22 pt at the default 11) and follow View → Larger / Smaller font (Ctrl + / − / 0 work
    here too); the caption shows the source and the translation so far."""

    def __init__(self, win) -> None:
        super().__init__(win, QtCore.Qt.WindowType.Window)  # closes with the main window
        self.win = win
        self.setWindowTitle("Attention Studio — presentation")
        layout = QtWidgets.QVBoxLayout(self)
        self.heatmap = Heatmap(win.cmap)
        self.heatmap.shrink_values = True  # values in small cells at 720p: a smaller font rather than none
        for name in ("left", "bottom"):  # token labels too: every row and column named, in a smaller font if need be
            self.heatmap.plot.getAxis(name).shrink_min_pt = TICK_MIN_PT
        self.heatmap.plot.getAxis("left").centre_ink = True  # an apostrophe or a period in its own row, not by the next label
        self.caption = QtWidgets.QLabel("")
        self.caption.setWordWrap(True)
        self.help = QtWidgets.QLabel(HELP)
        layout.addWidget(self.caption)
        layout.addWidget(self.heatmap, 1)
        layout.addWidget(self.help)
        self.hover = QtWidgets.QLabel(" ")
        layout.addWidget(self.hover)
        self.heatmap.hovered.connect(lambda t: self.hover.setText(t or " "))
        self._seen = None
        self.apply_font()
        win.style_.changed.connect(self._style_changed)  # font size and colour map follow the main window
        win.vm.subscribe(self.refresh)  # follow the main window's view model (no polling)
        self.refresh()

    def apply_font(self) -> None:
        """Fonts from the main window's size: ``font_size + PRESENT_EXTRA`` for the map, the
        caption a little smaller, the help and hover lines smaller still."""
        size = self.win.font_size + PRESENT_EXTRA
        font = QtGui.QFont(self.win.font())
        font.setPointSize(size)
        self.setFont(font)
        self.heatmap.set_font(font)
        small = QtGui.QFont(font)
        small.setPointSize(max(size - 8, 12))
        self.help.setFont(small)
        self.hover.setFont(small)
        self._seen = None

    def _style_changed(self) -> None:
        if self.font().pointSize() != self.win.font_size + PRESENT_EXTRA:
            self.apply_font()
        self.refresh()

    def refresh(self) -> None:
        """Redraw when the main window's result, step, view, selection or colour map changed."""
        vm = self.win.vm
        seen = (vm.version, vm.kind, tuple(vm.selected), vm.derived, vm.step, id(vm.result), id(self.win.cmap))
        if seen == self._seen:
            return
        self._seen = seen
        frame = vm.frame()  # what the main window enlarges: gui/state/view_spec.py
        spec = None if frame is None else frame.enlarged
        if spec is None:
            self.heatmap.set_empty()
            self.caption.setText("No translation yet")
            return
        source, so_far = self._fit_line(vm.result.source.text, False), self._fit_line(vm.text_at() or "…", True)
        sentence = f"{source}  →  {so_far}"
        if vm.confidence_text() and not vm.result.low_confidence:  # a low score is in its warning
            sentence += "   " + vm.confidence_text()
        warnings = vm.warnings()
        if warnings:  # first, on a line of their own: a long sentence does not push them out of sight
            sentence = " · ".join("⚠ " + w for w in warnings) + "\n" + sentence
        if spec.mask_picture:
            n = len(frame.masks or ())
            self.caption.setText(f"{sentence}   (masks · {spec.key[0] + 1} / {n} · step {vm.step})")
        else:
            self.caption.setText(f"{sentence}   (step {vm.step})")
        show_presented(self.heatmap, spec, self.win.cmap)

    def _fit_line(self, text: str, keep_end: bool) -> str:
        """``text`` cut with "…" to one line of the caption (the output keeps its newest words): a
        long input (one cut to the model's length) would push the warnings and the map out of sight."""
        width = self.caption.contentsRect().width()
        if width <= 0:
            return text
        mode = QtCore.Qt.TextElideMode.ElideLeft if keep_end else QtCore.Qt.TextElideMode.ElideRight
        return self.caption.fontMetrics().elidedText(text, mode, width)

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        self._seen = None  # the caption's lines are cut to the new width
        self.refresh()

    def _cycle(self, what: str, delta: int) -> None:
        win, vm = self.win, self.win.vm
        if what == "kind":
            names = view_kinds.names()
            win.set_view(names[(names.index(vm.kind) + delta) % len(names)])
            return
        frame = vm.frame()
        if frame is None:
            return
        if frame.masks is not None:
            if what == "mean":
                return  # masks have no mean over heads
            win.select((vm.selected[0] + delta) % len(frame.masks), 0)
            return
        n_layers, n_heads = frame.view.weights.shape[:2]
        layer, head = vm.selected
        if what == "mean":  # toggle the current layer's mean over heads (a derived cell)
            if vm.derived == ("mean", layer):
                win.select(layer, head)
            else:
                win.select_derived(("mean", layer))  # as a click on the grid's mean cell
            return
        if what == "layer" and vm.derived and vm.derived[0] == "mean":
            win.select_derived(("mean", (layer + delta) % n_layers))  # L steps through the layer means
            return
        if what == "layer":
            win.select((layer + delta) % n_layers, head)
        else:
            win.select(layer, (head + delta) % n_heads)

    def keyPressEvent(self, ev) -> None:
        key, back = ev.key(), -1 if ev.modifiers() & QtCore.Qt.KeyboardModifier.ShiftModifier else 1
        keys = QtCore.Qt.Key
        if key in (keys.Key_Escape, keys.Key_F11):
            self.close()
        elif key == keys.Key_V:
            self._cycle("kind", back)
        elif key == keys.Key_L:
            self._cycle("layer", back)
        elif key == keys.Key_H:
            self._cycle("head", back)
        elif key == keys.Key_M:
            self._cycle("mean", back)
        elif ev.modifiers() & QtCore.Qt.KeyboardModifier.ControlModifier and key in (
            keys.Key_Plus,
            keys.Key_Equal,
            keys.Key_Minus,
            keys.Key_0,
        ):
            if key == keys.Key_0:
                self.win.reset_font()
            else:
                self.win.change_font(-2 if key == keys.Key_Minus else +2)
        elif key in (keys.Key_Right, keys.Key_Left):
            c = self.win.controls
            c.set_position(c.position + (1 if key == keys.Key_Right else -1))
        else:
            super().keyPressEvent(ev)
        self.refresh()

    def closeEvent(self, ev) -> None:
        self.win.vm.unsubscribe(self.refresh)
        self.win.style_.changed.disconnect(self._style_changed)
        super().closeEvent(ev)
