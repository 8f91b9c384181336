"""Shared set-up for the GUI tests (pytest-qt, offscreen): one place that opens the main window on
a checkpoint and waits for work the worker thread sends back.

Why not ``qtbot.waitSignal`` alone: a signal emitted on the worker thread is caught as the worker
emits it, before the window's queued slot has run, so a test that looks at the window right after
``waitSignal`` races the event loop. These helpers wait on the window's own state instead
(:meth:`qtbot.waitUntil`), which only changes once the window's slot ran.
"""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from gui.app import register_fonts
from gui.window.main_window import MainWindow

LOAD_TIMEOUT_MS = 20000
WORK_TIMEOUT_MS = 30000
TEXT = "집에 누군가 있어?"


def open_window(qtbot, ckpt_path: str | Path, size: tuple[int, int] = (1400, 900)) -> MainWindow:
    """A shown :class:`MainWindow` (``size`` pixels) with ``ckpt_path`` loaded on the CPU, returned
    once the window has handled the load (its model line is set and the queued slots of the other
    panels connected to ``loaded`` have run). qtbot closes it after the test."""
    win = MainWindow(font_family=register_fonts())
    qtbot.addWidget(win)
    win.resize(*size)
    win.show()
    win.load_checkpoint(str(ckpt_path), "cpu")
    qtbot.waitUntil(lambda: win.model_info != "no model", timeout=LOAD_TIMEOUT_MS)
    QtWidgets.QApplication.processEvents()  # the other `loaded` slots, queued at the same emit
    return win


def do(qtbot, win: MainWindow, action) -> None:
    """Run a GUI ``action`` that sends work to the worker (translate, step, set position …) and
    return once the window has drawn the answer (its view model's version went up)."""
    version = win.vm.version
    action()
    qtbot.waitUntil(lambda: win.vm.version > version, timeout=WORK_TIMEOUT_MS)


def type_korean(widget, text: str) -> None:
    """Type as a Hangul IME does: each syllable is composed (pre-edit) and then committed."""
    widget.setFocus()
    for ch in text:
        pre = QtGui.QInputMethodEvent(ch, [])
        QtWidgets.QApplication.sendEvent(widget, pre)
        commit = QtGui.QInputMethodEvent()
        commit.setCommitString(ch)
        QtWidgets.QApplication.sendEvent(widget, commit)


def type_and_translate(qtbot, win: MainWindow, text: str = TEXT):
    """Type ``text``, press Enter (the live decoder starts at step 0), then Run to end ▶|;
    returns the window's result."""
    win.inputs.text.clear()
    type_korean(win.inputs.text, text)
    do(qtbot, win, lambda: qtbot.keyClick(win.inputs.text, QtCore.Qt.Key.Key_Return))
    assert win.vm.step == 0
    do(qtbot, win, lambda: qtbot.mouseClick(win.controls.end_button, QtCore.Qt.MouseButton.LeftButton))
    return win.result


def ablate(qtbot, win: MainWindow, heads: str, kind: str) -> None:
    """In the Ablate heads tab: choose ``kind`` ("enc", "dec", "cross"), type ``heads``
    ("1:2,2:1"), click Ablate and wait until the answer (result or error) is on screen
    (``answered`` is emitted on the GUI thread after the panel has drawn it)."""
    tabs = win.analysis
    p = tabs.ablation
    p.kind.setCurrentIndex(p.kind.findData(kind))
    p.heads.setText(heads)
    p.sync_boxes(heads)
    with qtbot.waitSignal(tabs.answered, timeout=WORK_TIMEOUT_MS, check_params_cb=lambda panel: panel == "ablate"):
        qtbot.mouseClick(p.ablate_button, QtCore.Qt.MouseButton.LeftButton)


def compare(qtbot, win: MainWindow) -> None:
    """In the Compare tab: click Compare and wait until the answer is on screen."""
    tabs = win.analysis
    with qtbot.waitSignal(tabs.answered, timeout=WORK_TIMEOUT_MS, check_params_cb=lambda panel: panel == "compare"):
        qtbot.mouseClick(tabs.compare.compare_button, QtCore.Qt.MouseButton.LeftButton)


def compare_checkpoints(qtbot, win: MainWindow, path_b, view: str, layer: int, head: int) -> None:
    """Select ``view`` and the 0-based ``layer``/``head`` in the main window, then compare the
    main input on the app's model (A) and on the checkpoint ``path_b`` (B) in the Compare tab."""
    win.set_view(view)
    win.select(layer, head)
    c = win.analysis.compare
    c.set_mode("checkpoints")
    c.path_b.setText(str(path_b))
    compare(qtbot, win)


def tick_specs(axis) -> list[tuple[QtCore.QRectF, str]]:
    """The tick labels ``axis`` draws now (after the window has laid it out): (rect in the axis's
    coordinates, text), as ``generateDrawSpecs`` gives them to the painter."""
    img = QtGui.QImage(600, 600, QtGui.QImage.Format.Format_ARGB32)
    painter = QtGui.QPainter(img)
    try:
        texts = axis.generateDrawSpecs(painter)[2]
    finally:
        painter.end()
    return [(rect, text) for rect, _, text in texts]
