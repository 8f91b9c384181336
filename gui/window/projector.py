"""The projector layout of the main window (View → Projector layout, F9; remembered between runs).

For a room: the side docks (candidates, experiments, masks), the input strip's settings rows, the
map's tab bar and hover line are hidden, the enlarged map fills the window — beside a compact head
grid where the map still keeps ``MAP_SHARE`` of the window's area with it, else alone — in a font
up to ``PROJECTOR_EXTRA`` points over the window's (as large as lets its rows be labelled), with
every token label shown (a smaller font down to ``TICK_MIN_PT``, staggered or at 45°, before any is
left out) and each cell's value printed where it fits. A larger font (Ctrl +) never makes the
window scroll or grow: the layout gives up the Korean input row first, then the grid, never the map
(:meth:`Projector.plan`).

Unlike Present mode (F11, :mod:`gui.window.present`), a window of its own with one map, this is
the main window itself: the step controls and the translation line stay where they are."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from gui.widgets.labels import GAP

PROJECTOR_EXTRA = 5  # the map's font, points over the window's (16 pt at the default 11) where its rows fit
TICK_MIN_PT = 10  # token labels shrink down to this size before any is left out
MAP_SHARE = 0.6  # the least share of the window's area the enlarged map keeps (with its labels and colour bar)
TRANSLATION_LINES = 2  # the translation line's most lines in the layout (all of it on hover)
SHORTCUT = "F9"
SETTING = "view/projector_layout"


def settings() -> QtCore.QSettings:
    """Where the app remembers view preferences: an INI file in the user's configuration folder
    (``~/.config/attention-studio/attention-studio.ini`` on Linux)."""
    fmt, scope = QtCore.QSettings.Format.IniFormat, QtCore.QSettings.Scope.UserScope
    return QtCore.QSettings(fmt, scope, "attention-studio", "attention-studio")


def remembered() -> bool:
    """Whether the projector layout was on when the app was last left (False if never set)."""
    return str(settings().value(SETTING, "false")).lower() in ("true", "1")


class Projector(QtCore.QObject):
    """The projector layout of ``win`` (a MainWindow): ``set(on)`` enters or leaves it, ``action``
    is the View menu's checkable entry (F9). ``shows`` says what the layout last kept:
    ``{"inputs": bool, "grid": bool}`` (the Korean input row and the head grid)."""

    def __init__(self, win, view_menu: QtWidgets.QMenu) -> None:
        super().__init__(win)
        self.win = win
        self.on = False
        self.shows = {"inputs": True, "grid": True}
        self._saved: dict = {}
        self._rows = 0  # the map's rows the layout was last fitted for
        self.action = view_menu.addAction("Projector &layout (map large, docks hidden)")
        self.action.setCheckable(True)
        self.action.setShortcut(QtGui.QKeySequence(SHORTCUT))
        self.action.toggled.connect(lambda on: self.set(on, remember=True))
        self._refit = QtCore.QTimer(self)  # one fit after a burst of resizes or font changes
        self._refit.setSingleShot(True)
        self._refit.setInterval(0)
        self._refit.timeout.connect(self.fit)

    # ---------- entering and leaving ----------
    def set(self, on: bool, remember: bool = False) -> None:
        """Enter (``on``) or leave the layout; ``remember``: store the choice for the next start."""
        on = bool(on)
        if remember:
            settings().setValue(SETTING, on)
        if self.action.isChecked() != on:
            self.action.blockSignals(True)  # (its toggled signal is the menu's and F9's way in, remembered)
            self.action.setChecked(on)
            self.action.blockSignals(False)
        if on == self.on:
            return
        if on:
            self._enter()
        else:
            self._leave()

    def _settings_row(self) -> list[QtWidgets.QWidget]:
        """The input panel's second row (reference, padding, decoding, device) and the batch row."""
        grid = self.win.inputs.layout()
        out = [self.win.live.bar]
        for i in range(grid.count()):
            row = grid.getItemPosition(i)[0]
            item = grid.itemAt(i)
            if row == 0:
                continue
            if item.widget() is not None:
                out.append(item.widget())
            elif item.layout() is not None:
                sub = item.layout()
                out += [sub.itemAt(j).widget() for j in range(sub.count()) if sub.itemAt(j).widget() is not None]
        return out

    def _enter(self) -> None:
        win = self.win
        docks = (win.topk_dock, win.tabs_dock, win.masks_dock)
        hidden = self._settings_row()
        self._saved = {
            "docks": {d: (d.toggleViewAction().isChecked(), d.isVisible()) for d in docks},  # open; in front
            "hidden": {w: w.isVisibleTo(w.parentWidget()) for w in hidden},
            "sizes": win.split.sizes(),
            "shrink": win.heatmap.shrink_values,
            "tab": win.map_tabs.currentIndex(),
            "lines": win.translation_label.max_lines,
        }
        self.on = True
        for dock in docks:
            dock.hide()
        for w in hidden:
            w.hide()
        win.map_tabs.setCurrentWidget(win.heatmap)  # the map, without the tab bar and the hover line
        win.map_tabs.tabBar().hide()
        win.hover_label.hide()
        win.translation_label.max_lines = TRANSLATION_LINES
        win.translation_label.setText(win.translation_label.text())  # fitted again
        win.heatmap.shrink_values = True  # values in small cells: a smaller font rather than none
        for name in ("left", "bottom"):
            win.heatmap.plot.getAxis(name).shrink_min_pt = TICK_MIN_PT
        win.style_.changed.connect(self._restyle)
        win.vm.subscribe(self._follow)
        win.installEventFilter(self)
        self._restyle()

    def _leave(self) -> None:
        win = self.win
        self.on = False
        win.removeEventFilter(self)
        win.style_.changed.disconnect(self._restyle)
        win.vm.unsubscribe(self._follow)
        self._refit.stop()
        saved = self._saved
        for w, shown in saved["hidden"].items():
            w.setVisible(shown)
        win.inputs.show()
        win.split.widget(0).show()
        win.map_tabs.tabBar().show()
        win.map_tabs.setCurrentIndex(saved["tab"])
        win.hover_label.show()
        win.translation_label.max_lines = saved["lines"]
        win.translation_label.setText(win.translation_label.text())
        for dock, (shown, _front) in saved["docks"].items():
            dock.setVisible(shown)
        for dock, (_shown, front) in saved["docks"].items():
            if front:
                dock.raise_()  # the tab that was in front of its group is again
        win.heatmap.shrink_values = saved["shrink"]
        for name in ("left", "bottom"):
            win.heatmap.plot.getAxis(name).shrink_min_pt = None
        self.shows = {"inputs": True, "grid": True}
        win.apply_font()  # the map's font and the panels' minimum sizes back to the window's
        win.split.setSizes(saved["sizes"])
        self._fit_strip()

    # ---------- fitting ----------
    def _restyle(self) -> None:
        """After a font change (the window's ``apply_font`` set the map's font and minimum size back)."""
        if self.on:
            self.fit()

    def eventFilter(self, obj, ev) -> bool:
        if obj is self.win and ev.type() == QtCore.QEvent.Type.Resize:
            self._refit.start()
        return super().eventFilter(obj, ev)

    def _strip_height(self, inputs: bool) -> int:
        """The input strip's height with (``inputs``) or without the Korean row: translation line and
        step controls always (both follow the font)."""
        top = self.win.top_dock.widget()
        lay = top.layout()
        m = lay.contentsMargins()
        parts = [self.win.translation_label.minimumHeight(), self.win.controls.sizeHint().height()]
        if inputs:
            parts.append(self.win.inputs.text.sizeHint().height() + 8)  # the row and the panel's margins
        return m.top() + m.bottom() + sum(parts) + lay.spacing() * (len(parts) - 1) + 2

    def _map_box(self, inputs: bool, grid: bool) -> tuple[int, int]:
        """The enlarged map's predicted (width, height) in pixels in a layout with or without the
        Korean row and the grid, from the window's size and its parts' size hints."""
        win = self.win
        chrome = win.menuBar().sizeHint().height() + (win.statusBar().sizeHint().height() if win.statusBar().isVisible() else 0)
        central_h = win.height() - chrome - self._strip_height(inputs) - 6  # the dock separator
        right_chrome = 8 + 4  # margins, the tab widget's frame (its tab bar and the hover line are hidden)
        width = win.width() - 8 - 4
        if grid:
            width -= self._grid_width() + win.split.handleWidth() + 8
        return max(width, 0), max(central_h - right_chrome, 0)

    def _grid_width(self) -> int:
        """A compact column for the grid: its minimum width, at least a sixth of the window."""
        win = self.win
        least = max(win.grid.minimumWidth(), win.grid.minimumSizeHint().width(), win.view_selector.minimumSizeHint().width())
        return max(least, win.width() // 6)

    def _fitting_pt(self, map_h: int, rows: int) -> tuple[int, bool]:
        """The largest map font from the window's size + ``PROJECTOR_EXTRA`` down to the window's
        size at which ``rows`` token labels fit beside a map ``map_h`` px high (its title, two lines
        of column labels and the axis title take about 4.2 lines of it; a label needs a line and a
        gap), and whether they fit at it: the window's size where none does (the labels then shrink,
        :mod:`gui.widgets.labels`)."""
        base = self.win.font_size
        font = QtGui.QFont(self.win.font())
        for pt in range(base + PROJECTOR_EXTRA, base, -1):
            font.setPointSize(pt)
            line = QtGui.QFontMetricsF(font).height()
            if map_h - 4.2 * line - 10 >= rows * (line + GAP):
                return pt, True
        font.setPointSize(base)
        line = QtGui.QFontMetricsF(font).height()
        return base, map_h - 4.2 * line - 10 >= rows * (line + GAP)

    def plan(self) -> dict:
        """What the layout keeps beside the map at this window size and font — the Korean input row
        and the grid — and the map's font (``"pt"``). Kept: the first of (both, the grid, the input
        row, neither) — the docks given up first, then the grid, never the map — at which the map has
        ``MAP_SHARE`` of the window's area, the grid its minimum height and the map's token labels
        the largest font (:meth:`_fitting_pt`); where they fit at none, the tallest map."""
        win = self.win
        area = max(win.width() * win.height(), 1)
        rows = max(len(win.heatmap.row_tokens), 1)
        best, best_key = None, None
        for inputs, grid in ((True, True), (False, True), (True, False), (False, False)):
            w, h = self._map_box(inputs, grid)
            grid_fits = not grid or h + 40 >= win.grid.minimumHeight()
            if w * h >= MAP_SHARE * area and grid_fits:
                pt, fits = self._fitting_pt(h, rows)
                key = (pt, 0 if fits else h)  # a larger font; where the labels must shrink, a taller map
                if best_key is None or key > best_key:
                    best, best_key = {"inputs": inputs, "grid": grid, "pt": pt}, key
        return best or {"inputs": False, "grid": False, "pt": self._fitting_pt(self._map_box(False, False)[1], rows)[0]}

    def fit(self) -> None:
        """Show what :meth:`plan` keeps and give the map the rest."""
        if not self.on:
            return
        win = self.win
        keep = self.plan()
        self.shows = {"inputs": keep["inputs"], "grid": keep["grid"]}
        self._rows = len(win.heatmap.row_tokens)
        win.inputs.setVisible(keep["inputs"])
        center = win.split.widget(0)
        center.setVisible(keep["grid"])
        if keep["grid"]:
            grid_w = self._grid_width()
            win.split.setSizes([grid_w, max(win.width() - grid_w, 1)])
        heatmap = win.heatmap
        font = QtGui.QFont(win.font())
        font.setPointSize(keep["pt"])
        if heatmap.font.toString() != font.toString():
            heatmap.set_font(font)
        fm = QtGui.QFontMetrics(font)
        heatmap.setMinimumSize(16 * fm.averageCharWidth(), 6 * fm.height())  # small: the map is never why it scrolls
        self._fit_strip()

    def _follow(self) -> None:
        """The view model changed: fit again when the map's number of rows did (a step adds one)."""
        if self.on and len(self.win.heatmap.row_tokens) != self._rows:
            self._refit.start()

    def _fit_strip(self) -> None:
        """The input strip as tall as what it shows now (a dock keeps its old height otherwise)."""
        win = self.win
        top = win.top_dock.widget()
        top.layout().activate()
        win.resizeDocks([win.top_dock], [top.minimumSizeHint().height()], QtCore.Qt.Orientation.Vertical)
        # the strip's own fitting (gui/window/layout.py) takes this height as fitted, not as dragged by the user
        QtCore.QTimer.singleShot(0, win, lambda: setattr(win, "_strip_fitted", win.top_dock.height()))


def install(win, view_menu: QtWidgets.QMenu) -> Projector:
    """Add View → Projector layout (F9) to ``view_menu``; the layout object is ``win.projector``."""
    view_menu.addSeparator()
    win.projector = Projector(win, view_menu)
    return win.projector


__all__ = ["MAP_SHARE", "PROJECTOR_EXTRA", "Projector", "install", "remembered", "settings"]
