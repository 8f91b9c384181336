"""View → Model precision reloads the model at bf16, int8 or int8-output (CPU); the maps stay finite,
normalised, exactly 0 where masked, and the tokens on the tiny model are those of fp32."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.gui import open_window, type_and_translate


@pytest.mark.parametrize("precision", ["bf16", "int8", "int8-output"])
def test_the_precision_menu_reloads_the_model_and_the_maps_stay_true(qtbot, tiny_checkpoint, precision):
    win = open_window(qtbot, tiny_checkpoint)
    fp32 = type_and_translate(qtbot, win)
    tokens = [s.token for s in fp32.steps]
    assert win.precision_actions["fp32"].isChecked()
    win.precision_actions[precision].trigger()
    qtbot.waitUntil(lambda: win.worker.checkpoint.precision == precision and precision in win.model_info, timeout=30000)
    assert win.precision_actions[precision].isChecked() and not win.precision_actions["fp32"].isChecked()
    result = type_and_translate(qtbot, win)
    assert [s.token for s in result.steps] == tokens
    for w in (result.maps.encoder_self, result.maps.decoder_self, result.maps.cross):
        w = np.asarray(w)
        assert w.dtype == np.float32 and np.isfinite(w).all()
    dec = np.asarray(result.maps.decoder_self)  # [L, H, T, T]: causal cells exactly 0, rows sum to 1
    t = dec.shape[-1]
    assert (dec[..., np.triu_indices(t, 1)[0], np.triu_indices(t, 1)[1]] == 0).all()
    assert np.allclose(dec.sum(-1), 1, atol=1e-5)


@pytest.mark.parametrize("native", [False, True])
def test_the_bf16_entry_says_whether_this_cpu_multiplies_bf16_in_hardware(qtbot, tiny_checkpoint, monkeypatch, native):
    import gui.window.layout as layout

    monkeypatch.setattr(layout, "cpu_bf16_native", lambda: native)
    win = open_window(qtbot, tiny_checkpoint)
    label = win.precision_actions["bf16"].text()
    assert ("emulated on this CPU: slower than fp32" in label) == (not native)
    assert ("this CPU has AVX512-BF16" in label) == native
    assert win.precision_actions["fp32"].text() == "fp32 (as trained)"
