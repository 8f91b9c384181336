"""Map titles say what is shown: the head (one-based, as the --layer/--head options and the menus),
and whether the causal mask was on or off."""

from __future__ import annotations

import numpy as np

from gui.window.view_menu import toggle_present
from tests.gui.window.test_font_scaling import _run
from tests.support.gui import TEXT, do, open_window, type_and_translate


def test_layer_head_checked_and_one_based_on_every_path(tiny_checkpoint, tmp_path):
    for path_args in ([], ["--screenshot", str(tmp_path / "x.png")]):
        r = _run("--checkpoint", str(tiny_checkpoint), "--text", TEXT, "--layer", "0", "--head", "0", *path_args)
        assert r.returncode == 2 and "numbered from 1" in r.stderr
        r = _run("--checkpoint", str(tiny_checkpoint), "--text", TEXT, "--layer", "3", *path_args)
        assert r.returncode == 2 and r.stderr.strip().endswith("(1-based) for the cross view")
        assert "--layer must be 1..2 and --head 1..4" in r.stderr


def test_title_names_the_head_it_shows(qtbot, window):
    type_and_translate(qtbot, window)
    window.set_view("decoder")
    window.select(-5, 99)  # out of range either way: clamped, and the title says which
    k = window.controls.position
    assert "layer 1, head 4" in window.heatmap.plot.titleLabel.text
    np.testing.assert_allclose(window.heatmap.image.image, window.result.maps.decoder_self[0, 3, :k, :k].numpy(), atol=1e-6)


# --- Teacher forcing with *Causal mask OFF*: the decoder self-attention the model computed had no
# mask, so no title may call it "masked"; each title says the mask was off (main window, derived
# cells, alignment lines, Present mode), and the column axis title fits beside the colour bar at the
# app's default window size (it ran under the colour bar: "target key (all T: no causal mask) (column").

CAUSAL_OFF_REFERENCE = "Is someone at home?"  # teacher forcing of TEXT ("집에 누군가 있어?")


def causal_off_window(qtbot, tiny_checkpoint):
    win = open_window(qtbot, tiny_checkpoint, (1600, 950))  # the app's default --size
    win.inputs.text.setText(TEXT)
    win.inputs.reference.setText(CAUSAL_OFF_REFERENCE)
    win.live.reference.causal_off.setChecked(True)  # teacher forcing re-runs only with a result
    do(qtbot, win, win.translate)
    assert win.result.mode == "teacher_forced" and win.result.causal is False
    win.set_view("decoder")
    win.select(1, 2)
    return win


def fits(heatmap) -> bool:
    axis = heatmap.plot.getAxis("bottom")
    return axis.label.boundingRect().width() <= axis.width()


def test_titles_say_the_causal_mask_was_off(qtbot, tiny_checkpoint):
    win = causal_off_window(qtbot, tiny_checkpoint)
    title = win.heatmap.plot.titleLabel.text
    assert title.startswith("Decoder self-attention, causal mask OFF — layer 2, head 3"), title
    assert "masked" not in title
    assert fits(win.heatmap), win.heatmap.plot.getAxis("bottom").labelText
    win.cell_clicked(("mean", 1))  # a derived cell: the layer mean
    assert win.heatmap.plot.titleLabel.text.startswith("Decoder self-attention, causal mask OFF — layer 2, mean")
    toggle_present(win)
    win.present_window.refresh()
    assert win.present_window.heatmap.plot.titleLabel.text.startswith("Decoder self-attention, causal mask OFF")
    win.present_window.close()
    win.select(0, 0)
    win.heads.map_tabs.setCurrentWidget(win.heads.align)
    qtbot.waitUntil(lambda: "causal mask OFF" in win.heads.lines.title, timeout=5000)


def test_with_the_causal_mask_the_title_says_masked(qtbot, tiny_checkpoint):
    win = causal_off_window(qtbot, tiny_checkpoint)
    do(qtbot, win, lambda: win.live.reference.causal_off.setChecked(False))
    assert win.result.causal is True
    assert win.heatmap.plot.titleLabel.text.startswith("Decoder masked self-attention — layer 2, head 3")
    assert fits(win.heatmap)
