"""A new tab panel is one new module plus one registration line (gui/panels/registry.py): shown
here with a small panel written into a temporary module. It gets only a PanelContext (never the
window), follows the view model through its change callback and adds arrays to File → Export."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

from gui.panels import registry
from tests.support.gui import open_window, type_and_translate

EXAMPLE = '''
"""The strongest weight of the enlarged map, as a line of text."""

import numpy as np
from PySide6 import QtWidgets

from gui.panels.context import Panel


class PeakPanel(QtWidgets.QLabel, Panel):
    name = "peak"

    def __init__(self, ctx):
        super().__init__("no result yet")
        self.ctx, self.peak = ctx, None
        ctx.vm.subscribe(self.follow)

    def tabs(self):
        return [(self, "Peak")]

    def follow(self):
        frame = self.ctx.vm.frame()
        spec = None if frame is None else frame.enlarged
        if spec is not None and not spec.mask_picture and spec.matrix.size:
            self.peak = float(np.max(spec.matrix))
            self.setText(f"{spec.title}: peak {self.peak:.4f}")

    def npz_extra(self):
        return {} if self.peak is None else {"peak": np.float32(self.peak)}
'''


@pytest.fixture
def registered(tmp_path, monkeypatch):
    """The example module on the path and its one registration line."""
    (tmp_path / "peak_panel.py").write_text(textwrap.dedent(EXAMPLE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import peak_panel

    monkeypatch.setattr(registry, "TAB_PANELS", [*registry.TAB_PANELS, peak_panel.PeakPanel])  # the one line
    yield peak_panel
    sys.modules.pop("peak_panel", None)


def test_a_registered_panel_gets_its_tab_follows_the_view_model_and_exports(qtbot, tiny_checkpoint, registered, tmp_path):
    from gui.export.files import export_npz

    win = open_window(qtbot, tiny_checkpoint)
    panel = win.panel("peak")
    tabs = win.live.tabs
    assert tabs.tabText(tabs.count() - 1) == "Peak" and tabs.widget(tabs.count() - 1) is panel
    type_and_translate(qtbot, win)
    win.set_view("cross")
    win.select(1, 2)
    v = win.heatmap.matrix  # what the main window enlarged
    assert panel.peak == pytest.approx(float(np.max(v))) and "layer 2, head 3" in panel.text()
    extra = {k: a for p in win.panels for k, a in p.npz_extra().items()}
    out = export_npz(tmp_path / "x.npz", win.result, win.controls.position, win.kind, win.selected, extra)
    with np.load(out) as z:
        assert float(z["peak"]) == pytest.approx(float(np.max(v)))
