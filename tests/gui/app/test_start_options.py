"""Options given on the command line when the window opens interactively do what their help says."""

from __future__ import annotations

from gui.app import register_fonts
from gui.window.main_window import MainWindow
from tests.support.gui import LOAD_TIMEOUT_MS, TEXT, WORK_TIMEOUT_MS


def test_steps_n_with_text_shows_step_n_once_translated(qtbot, tiny_checkpoint):
    """``main.py --text T --steps 3``: the window translates once the model is in and then shows
    step 3 (the same state a --screenshot with --steps 3 draws), not step 0."""
    win = MainWindow(font_family=register_fonts())
    qtbot.addWidget(win)
    win.show()
    win.inputs.text.setText(TEXT)
    win.translate_when_loaded, win.step_when_translated = True, 3  # what gui/app.py sets from the options
    win.load_checkpoint(str(tiny_checkpoint), "cpu")
    qtbot.waitUntil(lambda: win.model_info != "no model", timeout=LOAD_TIMEOUT_MS)
    qtbot.waitUntil(lambda: win.vm.result is not None and win.vm.step == 3, timeout=WORK_TIMEOUT_MS)
    assert win.controls.slider.value() == 3 and win.step_when_translated is None
    assert len(win.vm.result.steps) >= 3  # live: exactly the steps asked for were decoded
    win.close()
