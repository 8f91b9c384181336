"""The main window's widgets, menus and keyboard shortcuts, built onto the window (no state, no
drawing: the slots they connect to stay on :class:`gui.window.main_window.MainWindow`)."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from gui.state.view_data import KIND_TITLES, KINDS
from gui.widgets.controls import InputPanel, StepControls
from gui.widgets.fonts import scrolling
from gui.widgets.head_grid import HeadGrid
from gui.widgets.heatmap import COLORMAPS, Heatmap
from gui.widgets.mask_panel import MaskPanel
from gui.widgets.topk_panel import TopKPanel
from gui.window import models_menu
from gui.window import view_menu as display

HOVER_HINT = "hover a cell for query → key: weight (numbered from 1)"
GRID_CAPTION = "Every layer (rows) × head (columns); click one to enlarge:"
MASKS_CAPTION = "The masks the model was given up to this step (grey = masked, True); click one to enlarge:"


def build_widgets(win) -> None:
    """The input row, translation line, step controls and the three columns (top-k | view
    selector, head grid | enlarged map, hover line, masks) as attributes of ``win``; the status
    bar with its load progress; Enter/Cancel/device and the step keys (→ ← Space Home End)."""
    central = QtWidgets.QWidget()
    win.outer_layout = outer = QtWidgets.QVBoxLayout(central)
    win.inputs = InputPanel()
    win.translation_label = QtWidgets.QLabel("<b>Translation:</b> —<br><b>After step 0:</b> —")  # 2 lines, as later
    win.translation_label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
    win.translation_label.setWordWrap(True)
    win.controls = StepControls()
    outer.addWidget(win.inputs)
    outer.addWidget(win.translation_label)
    outer.addWidget(win.controls)
    win.split = split = QtWidgets.QSplitter()
    left = QtWidgets.QWidget()
    win.left_layout = lv = QtWidgets.QVBoxLayout(left)
    win.step_label = QtWidgets.QLabel("step 0")
    win.step_label.setWordWrap(True)
    win.topk = TopKPanel()
    lv.addWidget(win.step_label)
    lv.addWidget(QtWidgets.QLabel("Next-token candidates (top-k):"))
    lv.addWidget(win.topk, 1)
    center = QtWidgets.QWidget()
    cv = QtWidgets.QVBoxLayout(center)
    win.view_selector = QtWidgets.QComboBox()
    win.view_selector.addItems([KIND_TITLES[k] for k in KINDS])
    win.view_selector.setCurrentIndex(KINDS.index(win.kind))
    win.view_selector.currentIndexChanged.connect(lambda i: win.set_view(KINDS[i]))
    win.grid = HeadGrid(win.cmap)
    win.grid.clicked.connect(win.cell_clicked)
    cv.addWidget(win.view_selector)
    win.grid_caption = QtWidgets.QLabel(GRID_CAPTION)
    cv.addWidget(win.grid_caption)
    cv.addWidget(win.grid, 1)
    right = QtWidgets.QWidget()
    rv = QtWidgets.QVBoxLayout(right)
    win.heatmap = Heatmap(win.cmap)
    win.hover_label = QtWidgets.QLabel(HOVER_HINT)
    win.heatmap.hovered.connect(lambda t: win.hover_label.setText(t or HOVER_HINT))
    win.masks = MaskPanel()
    win.map_tabs = QtWidgets.QTabWidget()  # panels may add tabs beside the enlarged map
    win.map_tabs.addTab(win.heatmap, "Heatmap")
    rv.addWidget(win.map_tabs, 3)
    rv.addWidget(win.hover_label)
    rv.addWidget(win.masks, 2)
    for w in (left, center, right):
        split.addWidget(w)
    split.setSizes([360, 520, 560])
    outer.addWidget(split, 1)
    win.setCentralWidget(scrolling(central))  # scroll rather than squeeze or widen (gui/widgets/fonts.py)
    win.status = win.statusBar()
    win.load_bar = QtWidgets.QProgressBar()  # shown only while a checkpoint loads
    win.load_bar.setRange(0, 100)
    win.load_bar.setMaximumWidth(180)
    win.load_bar.setVisible(False)
    win.status.addPermanentWidget(win.load_bar)
    win.inputs.translate_requested.connect(win.translate)
    win.inputs.cancel_requested.connect(win.cancel)
    win.inputs.device_changed.connect(win.on_device_changed)
    for key, slot in (("Right", lambda: win.controls.set_position(win.controls.position + 1)),
                      ("Left", lambda: win.controls.set_position(win.controls.position - 1)),
                      ("Space", win.controls.toggle_play),
                      ("Home", lambda: win.controls.set_position(0)),
                      ("End", lambda: win.controls.set_position(win.controls.slider.maximum()))):
        sc = QtGui.QShortcut(QtGui.QKeySequence(key), win)
        sc.activated.connect(slot)


def build_menus(win) -> None:
    """File (open a model by name or a checkpoint folder, exports, quit) and View (font size, colour map, display options)."""
    file_menu = win.menuBar().addMenu("&File")
    models_menu.install(win, file_menu)  # the shipped and the user's models by name
    file_menu.addAction("&Open checkpoint folder…", QtGui.QKeySequence.StandardKey.Open, win.open_checkpoint_dialog)
    file_menu.addAction("Export enlarged &map as PNG…", lambda: display.export_dialog(win, "map"))
    file_menu.addAction("Export enlarged map as &SVG…", lambda: display.export_dialog(win, "map", "svg"))
    file_menu.addAction("Export head &grid as PNG…", lambda: display.export_dialog(win, "grid"))
    file_menu.addAction("Export displayed &tensors (.npz)…", lambda: display.export_dialog(win, "npz"))
    file_menu.addSeparator()
    file_menu.addAction("&Quit", QtGui.QKeySequence.StandardKey.Quit, win.close)
    view_menu = win.menuBar().addMenu("&View")
    view_menu.addAction("Larger font", QtGui.QKeySequence.StandardKey.ZoomIn, lambda: win.change_font(+2))
    view_menu.addAction("Smaller font", QtGui.QKeySequence.StandardKey.ZoomOut, lambda: win.change_font(-2))
    QtGui.QShortcut(QtGui.QKeySequence("Ctrl+="), win).activated.connect(lambda: win.change_font(+2))
    cmaps = view_menu.addMenu("Colour map")
    group = QtGui.QActionGroup(win)
    for label, name in COLORMAPS.items():
        act = cmaps.addAction(label, lambda n=name: win.set_colormap(n))
        act.setCheckable(True)
        act.setChecked(name == "viridis")
        group.addAction(act)
    display.install(win, view_menu)  # Ctrl+0, colour scale, cell values, Present (F11)
