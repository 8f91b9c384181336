"""The snapshots of a live toy-task run as slides: one PNG frame per snapshot (the grid, the
enlarged map, the curves so far and the caption, drawn by :class:`gui.widgets.learn_view.LearnView`
offscreen at :data:`FRAME_SIZE`) and an animated GIF of them (Pillow). Also the headless
``main.py --learn TASK --deck OUT``: train from a fixed seed, then write the frames and the GIF.

Frames are rendered one at a time (:class:`FrameWriter`), so the Learn tab can keep painting between
them; the curves grow frame by frame on axes fixed to the whole run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtGui

from core.errors import InputError
from core.training.live_session import LiveSession, LiveSettings, Snapshot
from core.training.toy_tasks import PRESET_UPDATES, TASKS
from gui.export.settle import settled_grab
from gui.widgets.colormap import Colormap
from gui.widgets.learn_view import LearnView

FRAME_SIZE = (1280, 720)
FRAME_MS, LAST_FRAME_MS = 500, 2500  # GIF: each frame, and the last one (the learned state)
EVERY = 50  # updates between snapshots of the headless run


def resolve_task(text: str) -> tuple[str, str | None]:
    """``--learn TASK``: a task name (copy, reverse, sort, numbers) or the path of a TSV file of
    pairs. Returns (task name, path or None). Raises InputError naming the choices."""
    if text in TASKS and text != "file":
        return text, None
    if Path(text).is_file():
        return "file", text
    names = ", ".join(t for t in TASKS if t != "file")
    raise InputError(f"--learn {text!r}: no such task or file; choose {names}, or a TSV file of source<TAB>target pairs")


class FrameWriter:
    """Writes ``snapshots`` as ``frame_000.png`` … into ``out`` (created), one per :meth:`write`.

    Raises OSError (``out`` cannot be made or a frame cannot be written, naming the path)."""

    def __init__(
        self,
        snapshots: list[Snapshot],
        out: str | Path,
        cmap: Colormap,
        font: QtGui.QFont | None = None,
        what: str = "",
        kind: str = "cross",
        size: tuple[int, int] = FRAME_SIZE,
    ) -> None:
        if not snapshots:
            raise ValueError("no snapshots to export yet: train first")
        self.out = Path(out)
        try:
            self.out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OSError(f"{self.out}: cannot make the folder ({exc.strerror or exc})") from exc
        self.snapshots, self.kind, self.what = list(snapshots), kind, what
        self.view = LearnView(cmap, font)
        self.view.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen)
        self.view.setAutoFillBackground(True)
        pal = self.view.palette()
        pal.setColor(QtGui.QPalette.ColorRole.Window, QtGui.QColor("white"))
        self.view.setPalette(pal)
        self.view.layout().setContentsMargins(12, 8, 12, 8)  # the caption never touches the frame's edge
        self.view.setFixedSize(*size)
        self.view.show()
        losses = [v for s in self.snapshots for v in (s.evaluation.train_loss, s.evaluation.heldout_nll) if np.isfinite(v)]
        self.limits = (float(self.snapshots[-1].updates), max(losses, default=1.0) * 1.05)
        self.paths: list[Path] = []

    def __len__(self) -> int:
        return len(self.snapshots)

    def write(self, i: int) -> Path:
        """Render snapshot ``i`` (the curves up to it) and write its PNG; returns the path."""
        self.view.show_snapshot(self.snapshots[: i + 1], i, self.kind, what=self.what, limits=self.limits)
        path = self.out / f"frame_{i:03d}.png"
        if not settled_grab(self.view).save(str(path)):
            raise OSError(f"{path}: could not write the frame")
        self.paths.append(path)
        return path

    def close(self) -> None:
        self.view.close()
        self.view.deleteLater()


def write_gif(frames: list[Path], path: str | Path, frame_ms: int = FRAME_MS, last_ms: int = LAST_FRAME_MS) -> Path:
    """An animated GIF of the PNG ``frames`` (looping; each shown ``frame_ms`` ms, the last
    ``last_ms``). Raises InputError when Pillow is missing, OSError when it cannot be written."""
    try:
        from PIL import Image
    except ImportError as exc:  # a dependency: only a broken install lacks it
        raise InputError("writing the GIF needs Pillow (pip install Pillow); the PNG frames are written") from exc
    if not frames:
        raise ValueError("no frames to put in a GIF")
    images = [Image.open(p).convert("RGB").convert("P", palette=Image.Palette.ADAPTIVE, colors=256) for p in frames]
    durations = [frame_ms] * (len(images) - 1) + [last_ms]
    path = Path(path)
    images[0].save(path, save_all=True, append_images=images[1:], duration=durations, loop=0)
    return path


def write_frames(writer: FrameWriter, gif_name: str = "learning.gif") -> tuple[list[Path], Path]:
    """Every frame of ``writer``, then the GIF beside them. Returns (frames, gif)."""
    try:
        paths = [writer.write(i) for i in range(len(writer))]
    finally:
        writer.close()
    return paths, write_gif(paths, writer.out / gif_name)


def train_and_write(
    task_text: str,
    out: str | Path,
    cmap: Colormap,
    font: QtGui.QFont | None = None,
    seed: int = 0,
    updates: int | None = None,
    every: int = EVERY,
    settings: LiveSettings | None = None,
    progress: Callable[[str], None] = print,
) -> tuple[list[Path], Path]:
    """Train ``task_text`` (:func:`resolve_task`) from ``seed`` with ``settings`` (default
    :class:`LiveSettings`) for ``updates`` (default the task's preset), a snapshot at update 0 and
    every ``every`` updates, then write the frames and the GIF into ``out``. Raises InputError
    (task, file, Pillow) and OSError (``out``)."""
    name, path = resolve_task(task_text)
    session = LiveSession(name, settings or LiveSettings(), seed=seed, path=path)
    total = updates or PRESET_UPDATES[name]
    session.snapshot()
    while session.updates < total:
        session.step(min(every, total - session.updates))
        ev = session.snapshot().evaluation
        align = "" if ev.alignment is None else f", alignment {ev.alignment:.0%}"
        progress(f"update {session.updates}/{total}: held-out loss {ev.heldout_nll:.3f}{align}")
    writer = FrameWriter(session.snapshots, out, cmap, font, what=session.task.description)
    return write_frames(writer)


__all__ = ["FRAME_SIZE", "FrameWriter", "resolve_task", "train_and_write", "write_frames", "write_gif"]
