"""The Learn tab's slides: one PNG frame per snapshot and an animated GIF of them, and the headless
``main.py --learn TASK --deck OUT`` (its task argument and its errors)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image
from PySide6 import QtGui

from core.errors import InputError
from core.training.live_session import LiveSettings
from gui.app import main
from gui.export.learn_frames import FRAME_SIZE, FrameWriter, resolve_task, train_and_write
from gui.widgets.colormap import Colormap

TINY = LiveSettings(d_model=16, n_heads=2, layers=1, d_ff=32, batch_size=8, warmup=10)


def test_frames_and_gif_of_a_short_run(qtbot, tmp_path):
    said: list[str] = []
    frames, gif = train_and_write(
        "reverse",
        tmp_path / "deck",
        Colormap.named("viridis"),
        QtGui.QFont(),
        updates=4,
        every=2,
        settings=TINY,
        progress=said.append,
    )
    assert [p.name for p in frames] == ["frame_000.png", "frame_001.png", "frame_002.png"]
    assert said[-1].startswith("update 4/4: held-out loss")
    for p in frames:
        with Image.open(p) as im:
            assert im.size == FRAME_SIZE  # logical pixels at scale 1 (offscreen)
    pngs = []
    for p in frames:
        with Image.open(p) as f:
            pngs.append(np.asarray(f.convert("RGB"), dtype=np.int16))

    def off(a, b) -> float:
        return float(np.abs(a - b).mean())

    with Image.open(gif) as im:
        assert im.n_frames == 3 and im.size == FRAME_SIZE and im.info["loop"] == 0
        for k in (0, 2):  # each GIF frame is its PNG (up to the 256-colour palette), not another one
            im.seek(k)
            g = np.asarray(im.convert("RGB"), dtype=np.int16)
            assert off(g, pngs[k]) < 2 and off(g, pngs[k]) < off(g, pngs[2 - k])


def test_no_snapshot_no_frames(tmp_path):
    with pytest.raises(ValueError, match="train first"):
        FrameWriter([], tmp_path, Colormap.named("viridis"))


def test_task_argument(tmp_path):
    assert resolve_task("numbers") == ("numbers", None)
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("가\ta\n", encoding="utf-8")
    assert resolve_task(str(pairs)) == ("file", str(pairs))
    with pytest.raises(InputError, match="copy, reverse, sort, numbers"):
        resolve_task("file")  # the task name alone names no file
    with pytest.raises(InputError, match="no such task or file"):
        resolve_task(str(tmp_path / "missing.tsv"))


def test_command_line_errors(tmp_path, capsys):
    assert main(["--learn", "reverse"]) == 2
    assert "--learn TASK needs --deck OUT" in capsys.readouterr().err
    assert main(["--learn", "transpose", "--deck", str(tmp_path / "out")]) == 2
    assert "no such task or file" in capsys.readouterr().err
    bad = tmp_path / "three.tsv"
    bad.write_text("가\ta\n나\tb\n다\tc\n", encoding="utf-8")
    assert main(["--learn", str(bad), "--deck", str(tmp_path / "out")]) == 2
    assert "at least 10" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()  # nothing written for a run that never started
