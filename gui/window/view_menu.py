"""View-menu actions for presenters (font reset, colour scale, cell values, presentation mode)
and the export dialog. Kept out of main_window.py; ``install(win, view_menu)`` wires them."""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtGui, QtWidgets

from gui.export.files import WHAT, export_npz, remember, start_dir
from gui.export.grid_image import export_grid, grid_header
from gui.export.map_image import export_map
from gui.widgets.colour_scale import SCALES


def install(win, view_menu: QtWidgets.QMenu) -> None:
    """Add Ctrl+0 (reset font), colour scale, cell values and Present (F11) to ``view_menu``."""
    reset = view_menu.addAction("Reset font size", win.reset_font)
    reset.setShortcut(QtGui.QKeySequence("Ctrl+0"))
    scales = view_menu.addMenu("Colour scale")
    group = QtGui.QActionGroup(win)
    win.scale_actions = {}
    for key, label in SCALES.items():
        act = scales.addAction(label, lambda k=key: set_scale(win, k))
        act.setCheckable(True)
        act.setChecked(key == "fixed")
        group.addAction(act)
        win.scale_actions[key] = act
    values = view_menu.addAction("Print values in small maps (≤ 16 × 16)")
    values.setCheckable(True)
    values.setChecked(True)
    values.toggled.connect(win.heatmap.set_show_values)
    view_menu.addSeparator()
    present = view_menu.addAction("&Present (one map, full screen)", lambda: toggle_present(win))
    present.setShortcut(QtGui.QKeySequence("F11"))
    win.present_window = None
    # a long read-out must not widen the right column (the layout would jump under the pointer)
    policy = win.hover_label.sizePolicy()
    policy.setHorizontalPolicy(QtWidgets.QSizePolicy.Policy.Ignored)
    win.hover_label.setSizePolicy(policy)
    # long captions and view names wrap or elide instead of setting the middle column's minimum width
    win.grid_caption.setWordWrap(True)
    win.view_selector.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    win.view_selector.setMinimumContentsLength(16)


def set_scale(win, scale: str) -> None:
    """Colour scale of the enlarged map, the thumbnails and the Ablate heads / Compare tabs' maps:
    "fixed" [0, 1] or "per-map"."""
    win.heatmap.set_scale(scale)
    win.grid.set_scale(scale)
    for panel in win.panels:  # e.g. the Ablate heads / Compare tabs' A and B maps
        panel.set_scale(scale)
    win.style_.update(scale=scale)
    win.redraw(force=True)
    if win.present_window is not None:
        win.present_window.heatmap.set_scale(scale)


def toggle_present(win) -> None:
    """Open (or close) presentation mode: one map full-screen with large fonts."""
    from gui.window.present import PresentWindow

    if win.present_window is not None and win.present_window.isVisible():
        win.present_window.close()
        return
    win.present_window = PresentWindow(win)
    win.present_window.heatmap.set_scale(win.heatmap.scale)
    show_full_screen(win.present_window, win.screen())


def show_full_screen(window, screen) -> None:
    """Full screen with or without a window manager: ``showFullScreen`` alone leaves a bare X
    server (a kiosk, no window manager) with the window's default size, so the window is also
    given the screen's whole geometry."""
    if screen is not None:
        window.setGeometry(screen.geometry())
    window.showFullScreen()
    if screen is not None and window.geometry() != screen.geometry():
        window.setGeometry(screen.geometry())


def export_dialog(win, what: str, fmt: str = "png") -> Path | None:
    """Ask for a file name (dialog in :func:`gui.export.files.start_dir`) and write ONE file: the
    enlarged map (every token label: :func:`gui.export.map_image.export_map`) or the grid as PNG or
    SVG (``fmt``; SVG text as outlines), or the displayed
    tensors as .npz (``what="npz"``); the status bar names the file and what it holds. Returns the
    written path, or None."""
    if win.result is None:
        win.status.showMessage("nothing to export yet: translate a sentence first")
        return None
    ext = "npz" if what == "npz" else fmt
    name = {"map": "attention-map", "grid": grid_header(win.vm).stem, "npz": "attention"}[what] + f".{ext}"
    path, _ = QtWidgets.QFileDialog.getSaveFileName(
        win, f"Export {WHAT.get(what, 'tensors')}", str(start_dir() / name), f"*.{ext}"
    )
    if not path:
        return None
    try:
        if what == "npz":
            out = export_npz(
                path,
                win.result,
                win.controls.position,
                win.kind,
                win.selected,
                {name: array for panel in win.panels for name, array in panel.npz_extra().items()},
            )
            win.status.showMessage(f"saved {out}: every view's weights and masks at step {win.controls.position}", 8000)
        else:
            note = " (vector, text as outlines)" if fmt == "svg" else ""
            if what == "map":  # every token label, laid out larger than on screen where needed
                done = export_map(path, win.heatmap, fmt)
                out, (w, h), note = done.path, done.size, note + done.note
            else:  # below a header: view, sentence, translation, step, colour scale
                done = export_grid(path, win.grid, grid_header(win.vm), fmt)
                out, (w, h), note = done.path, done.size, note + done.note
            remember(out)
            win.status.showMessage(f"saved {out}: {WHAT[what]}, {w} × {h} px{note}", 8000)
        return Path(out)
    except OSError as exc:
        QtWidgets.QMessageBox.warning(win, "Export failed", str(exc))
        return None
