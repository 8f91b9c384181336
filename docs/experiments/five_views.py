"""Render the five main views (encoder, decoder, cross, masks, Present) of one sentence to PNGs
with ``attention-studio --screenshot``, or compare two such folders pixel by pixel.

    python docs/experiments/five_views.py render OUT_DIR
    python docs/experiments/five_views.py compare BEFORE_DIR AFTER_DIR

``compare`` prints, per view, the image sizes and the number of differing pixels; it exits 1 when
any view differs. Used to check that a restructure of the GUI changed nothing on screen.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

TEXT = "비가 와서 우리는 집에 있었어요."
VIEWS = {  # name -> extra arguments
    "encoder": ["--view", "encoder", "--layer", "2", "--head", "3"],
    "decoder": ["--view", "decoder", "--layer", "4", "--head", "2", "--steps", "4"],
    "cross": ["--view", "cross", "--layer", "4", "--head", "1"],
    "masks": ["--view", "masks", "--pad-to", "12", "--steps", "3"],
    "present": ["--view", "cross", "--layer", "3", "--head", "2", "--present"],
}


def render(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, extra in VIEWS.items():
        cmd = [sys.executable, "main.py", "--text", TEXT, "--size", "1600x950", *extra, "--screenshot", str(out / f"{name}.png")]
        subprocess.run(cmd, check=True)


def _pixels(path: Path) -> np.ndarray:
    from PySide6 import QtGui

    img = QtGui.QImage(str(path)).convertToFormat(QtGui.QImage.Format.Format_RGBA8888)
    return np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.width(), 4).copy()


def compare(before: Path, after: Path) -> int:
    bad = 0
    for name in VIEWS:
        a, b = _pixels(before / f"{name}.png"), _pixels(after / f"{name}.png")
        if a.shape != b.shape:
            print(f"{name}: size {a.shape[1]}x{a.shape[0]} -> {b.shape[1]}x{b.shape[0]}")
            bad += 1
            continue
        diff = int((a != b).any(axis=2).sum())
        print(f"{name}: {a.shape[1]}x{a.shape[0]}, {diff} pixels differ")
        bad += diff > 0
    return 1 if bad else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("render").add_argument("out", type=Path)
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = p.parse_args()
    if args.cmd == "render":
        render(args.out)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
