"""The main window's widgets, menus and keyboard shortcuts, built onto the window (no state, no
drawing: the slots they connect to stay on :class:`gui.window.main_window.MainWindow`)."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from core.device import cpu_bf16_native
from gui.state import view_kinds
from gui.widgets.colour_scale import COLORMAPS
from gui.widgets.controls import InputPanel, StepControls
from gui.widgets.fence import fenced
from gui.widgets.fonts import WrappedLabel, scrolling
from gui.widgets.head_grid import HeadGrid
from gui.widgets.heatmap import Heatmap
from gui.widgets.mask_panel import MaskPanel
from gui.widgets.topk_panel import TopKPanel
from gui.window import lecture_inputs, models_menu, projector
from gui.window import view_menu as display


def precision_labels(bf16_native: bool) -> dict[str, str]:
    """View → Model precision's entries. bf16 steps faster only where the CPU multiplies bfloat16 in
    hardware (AVX512-BF16 or AMX, :func:`core.device.cpu_bf16_native`); elsewhere PyTorch emulates
    it and it is slower than fp32, so the label says which of the two this machine is."""
    bf16 = "bf16 (faster: this CPU has AVX512-BF16)" if bf16_native else "bf16 (emulated on this CPU: slower than fp32)"
    return {
        "fp32": "fp32 (as trained)",
        "int8-output": "fp32 layers, int8 output projection (CPU; the maps are fp32's)",
        "bf16": bf16,
        "int8": "int8 linear layers (CPU, fastest)",
    }


HOVER_HINT = "hover a cell for query → key: weight (numbered from 1)"
GRID_CAPTION = "Every layer (rows) × head (columns); click one to enlarge:"
MASKS_CAPTION = "The masks the model was given up to this step (grey = masked, True); click one to enlarge:"


def _dock(win, title: str, name: str, widget: QtWidgets.QWidget) -> QtWidgets.QDockWidget:
    dock = QtWidgets.QDockWidget(title, win)
    dock.setObjectName(name)  # saveState / restoreState key
    dock.setWidget(widget)
    dock.setFeatures(
        QtWidgets.QDockWidget.DockWidgetFeature.DockWidgetClosable
        | QtWidgets.QDockWidget.DockWidgetFeature.DockWidgetMovable
        | QtWidgets.QDockWidget.DockWidgetFeature.DockWidgetFloatable
    )
    return dock


def _fit_strip(win, top: QtWidgets.QWidget) -> None:
    """A dock keeps the height it once had: as the translation wraps into fewer lines, the input
    strip shrinks with it, unless the user dragged it to another height since it was last fitted."""
    fitted, height = getattr(win, "_strip_fitted", None), win.top_dock.height()
    if fitted is not None and height != fitted and height > win.top_dock.minimumSizeHint().height():
        return  # dragged taller by the user: that height stays (the dock still grows with the label's minimum)
    win.resizeDocks([win.top_dock], [top.minimumSizeHint().height()], QtCore.Qt.Orientation.Vertical)
    QtCore.QTimer.singleShot(0, win, lambda: setattr(win, "_strip_fitted", win.top_dock.height()))  # once laid out


def build_widgets(win) -> None:
    """The map first: the central area is the head grid beside the enlarged map (the larger,
    with the hover line under it). Above it, a fixed strip: the input rows, the translation line
    and the step controls. Around it, dock widgets that can be hidden (View → Panels), moved or
    floated: next-token candidates and the experiment / analysis tabs on the left
    (``add_tabs_dock``), the masks below. Attributes of ``win``; also the status bar with its load
    progress, Enter/Cancel/device and the step keys (→ ← Space Home End)."""
    top = QtWidgets.QWidget()
    win.outer_layout = outer = QtWidgets.QVBoxLayout(top)
    outer.setContentsMargins(6, 4, 6, 2)
    win.inputs = InputPanel()
    win.translation_label = WrappedLabel("<b>Translation:</b> —<br><b>After step 0:</b> —")  # 2 lines, as later
    win.translation_label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
    win.controls = StepControls()
    outer.addWidget(win.inputs)
    outer.addWidget(fenced(win.translation_label, hints=False))  # new text every step: no window re-layout for it
    outer.addWidget(win.controls)
    win.top_dock = _dock(win, "Input and steps", "input", top)
    win.top_dock.setFeatures(QtWidgets.QDockWidget.DockWidgetFeature.NoDockWidgetFeatures)  # always there
    win.top_dock.setTitleBarWidget(QtWidgets.QWidget())  # no title bar: it is the window's input strip
    for corner in (QtCore.Qt.Corner.TopLeftCorner, QtCore.Qt.Corner.TopRightCorner):
        win.setCorner(corner, QtCore.Qt.DockWidgetArea.TopDockWidgetArea)  # the strip spans the window
    win.setCorner(QtCore.Qt.Corner.BottomLeftCorner, QtCore.Qt.DockWidgetArea.LeftDockWidgetArea)
    win.addDockWidget(QtCore.Qt.DockWidgetArea.TopDockWidgetArea, win.top_dock)
    win.translation_label.fitted.connect(lambda _h: QtCore.QTimer.singleShot(0, win, lambda: _fit_strip(win, top)))

    left = QtWidgets.QWidget()
    win.left_layout = lv = QtWidgets.QVBoxLayout(left)
    win.step_label = QtWidgets.QLabel("step 0")
    win.step_label.setWordWrap(True)
    win.topk = TopKPanel()
    lv.addWidget(win.step_label)
    lv.addWidget(QtWidgets.QLabel("Next-token candidates (top-k):"))
    lv.addWidget(win.topk, 1)
    win.topk_dock = _dock(win, "Next-token candidates", "topk", scrolling(left))  # squeezed: it scrolls
    win.addDockWidget(QtCore.Qt.DockWidgetArea.LeftDockWidgetArea, win.topk_dock)

    win.split = split = QtWidgets.QSplitter()
    center = QtWidgets.QWidget()
    cv = QtWidgets.QVBoxLayout(center)
    cv.setContentsMargins(4, 4, 2, 4)
    win.view_selector = QtWidgets.QComboBox()
    win.view_selector.addItems([v.title for v in view_kinds.all_kinds()])
    win.view_selector.setCurrentIndex(view_kinds.names().index(win.kind))
    win.view_selector.currentIndexChanged.connect(lambda i: win.set_view(view_kinds.names()[i]))
    win.grid = HeadGrid(win.cmap)
    win.grid.clicked.connect(win.cell_clicked)
    cv.addWidget(win.view_selector)
    win.grid_caption = QtWidgets.QLabel(GRID_CAPTION)
    cv.addWidget(win.grid_caption)
    cv.addWidget(win.grid, 1)
    right = QtWidgets.QWidget()
    rv = QtWidgets.QVBoxLayout(right)
    rv.setContentsMargins(2, 4, 4, 4)
    win.heatmap = Heatmap(win.cmap)
    win.hover_label = QtWidgets.QLabel(HOVER_HINT)
    win.heatmap.hovered.connect(lambda t: win.hover_label.setText(t or HOVER_HINT))
    win.map_tabs = QtWidgets.QTabWidget()  # panels may add tabs beside the enlarged map
    win.map_tabs.addTab(win.heatmap, "Heatmap")
    rv.addWidget(win.map_tabs, 1)
    rv.addWidget(win.hover_label)
    for w in (center, right):
        split.addWidget(w)
    split.setStretchFactor(0, 2)
    split.setStretchFactor(1, 3)  # the enlarged map is the largest element
    split.setSizes([400, 600])
    win.setCentralWidget(scrolling(split))  # scroll rather than squeeze or widen (gui/widgets/fonts.py)

    win.masks = MaskPanel()
    win.masks_dock = _dock(win, "Masks given", "masks", scrolling(win.masks))
    win.addDockWidget(QtCore.Qt.DockWidgetArea.BottomDockWidgetArea, win.masks_dock)
    win.status = win.statusBar()
    win.load_bar = QtWidgets.QProgressBar()  # shown only while a checkpoint loads
    win.load_bar.setRange(0, 100)
    win.load_bar.setMaximumWidth(180)
    win.load_bar.setVisible(False)
    win.status.addPermanentWidget(win.load_bar)
    win.inputs.translate_requested.connect(win.translate)
    win.inputs.cancel_requested.connect(win.cancel)
    win.inputs.device_changed.connect(win.on_device_changed)
    for key, slot in (
        ("Right", lambda: win.controls.set_position(win.controls.position + 1)),
        ("Left", lambda: win.controls.set_position(win.controls.position - 1)),
        ("Space", win.controls.toggle_play),
        ("Home", lambda: win.controls.set_position(0)),
        ("End", lambda: win.controls.set_position(win.controls.slider.maximum())),
    ):
        sc = QtGui.QShortcut(QtGui.QKeySequence(key), win)
        sc.activated.connect(slot)


def add_tabs_dock(win, tabs: QtWidgets.QTabWidget) -> None:
    """The experiment and analysis tabs as a dock under the next-token candidates."""
    win.tabs_dock = _dock(win, "Experiments and analysis", "tabs", scrolling(tabs))  # narrower than a tab: scrolls
    win.addDockWidget(QtCore.Qt.DockWidgetArea.LeftDockWidgetArea, win.tabs_dock)
    win.splitDockWidget(win.topk_dock, win.tabs_dock, QtCore.Qt.Orientation.Vertical)
    for dock in (win.topk_dock, win.tabs_dock, win.masks_dock):
        win.panels_menu.addAction(dock.toggleViewAction())


def arrange_docks(win, width: int, height: int) -> None:
    """Fit the docks to a window of ``width`` × ``height`` logical pixels, once, when it opens.

    The left column takes about a quarter of the width (280–420 px), less when the grid and the
    map need it (never below its own minimum). Below 900 px of height the masks join the tabs on
    the left (a tab of their own) so the grid and the map keep the height; when even the
    candidates and the tabs cannot stand one above the other (large fonts), they become tabs too."""
    central = win.centralWidget().widget().minimumSizeHint().width() + 24
    least = max(win.topk_dock.minimumSizeHint().width(), 160)
    side = max(least, min(420, max(280, width // 4), width - central))
    win.resizeDocks([win.topk_dock, win.tabs_dock], [side, side], QtCore.Qt.Orientation.Horizontal)
    chrome = win.menuBar().sizeHint().height() + win.statusBar().sizeHint().height()
    room = height - chrome - win.top_dock.sizeHint().height()
    if height < 900:
        win.tabifyDockWidget(win.tabs_dock, win.masks_dock)
        if win.topk_dock.minimumSizeHint().height() + 200 > room:
            win.tabifyDockWidget(win.tabs_dock, win.topk_dock)
            win.topk_dock.raise_()
        else:
            win.tabs_dock.raise_()
            win.resizeDocks(
                [win.topk_dock, win.tabs_dock], [max(160, room * 2 // 5), max(200, room * 3 // 5)], QtCore.Qt.Orientation.Vertical
            )
    else:
        win.resizeDocks(
            [win.topk_dock, win.tabs_dock], [max(200, height // 3), max(240, height // 2)], QtCore.Qt.Orientation.Vertical
        )
        win.addDockWidget(QtCore.Qt.DockWidgetArea.BottomDockWidgetArea, win.masks_dock)
        win.resizeDocks([win.masks_dock], [max(160, height // 5)], QtCore.Qt.Orientation.Vertical)
    win.resize(width, height)  # docks stacked before they were tabified may have made it taller


def build_menus(win) -> None:
    """File (open a model by name or a checkpoint folder, exports, quit) and View (font size, colour map, display options)."""
    file_menu = win.menuBar().addMenu("&File")
    models_menu.install(win, file_menu)  # the shipped and the user's models by name
    file_menu.addAction("&Open checkpoint folder…", QtGui.QKeySequence.StandardKey.Open, win.open_checkpoint_dialog)
    file_menu.addAction("Export enlarged &map as PNG…", lambda: display.export_dialog(win, "map"))
    file_menu.addAction("Export enlarged map as &SVG…", lambda: display.export_dialog(win, "map", "svg"))
    file_menu.addAction("Export head &grid as PNG…", lambda: display.export_dialog(win, "grid"))
    file_menu.addAction("Export displayed &tensors (.npz)…", lambda: display.export_dialog(win, "npz"))
    file_menu.addAction("Save state as &lecture step…", lambda: lecture_inputs.save_state_dialog(win))
    file_menu.addSeparator()
    file_menu.addAction("&Quit", QtGui.QKeySequence.StandardKey.Quit, win.close)
    view_menu = win.menuBar().addMenu("&View")
    win.panels_menu = view_menu.addMenu("Panels")  # show, hide (and, by dragging the title, move) the docks
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
    precision = view_menu.addMenu("Model precision")  # reloads the model; fp32 is the model as trained
    group = QtGui.QActionGroup(win)
    win.precision_actions = {}
    for name, label in precision_labels(cpu_bf16_native()).items():
        act = precision.addAction(label, lambda n=name: win.set_precision(n))
        act.setCheckable(True)
        act.setChecked(name == "fp32")
        group.addAction(act)
        win.precision_actions[name] = act
    display.install(win, view_menu)  # Ctrl+0, colour scale, cell values, Present (F11)
    projector.install(win, view_menu)  # View → Projector layout (F9): gui/window/projector.py
