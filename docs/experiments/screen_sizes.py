"""Render the main window at the screen sizes a lecture hall meets, each at 100 % and 200 %
scaling (QT_SCALE_FACTOR), to PNGs to look at: the grid and the enlarged map must show without
scrolling. ``--size`` is in logical pixels, so 1280x720 at 200 % is a 2560 x 1440 picture.

    python docs/experiments/screen_sizes.py OUT_DIR
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SIZES = ("1280x720", "1366x768", "1920x1080", "2560x1440")
TEXT = "비가 와서 우리는 집에 있었어요. 그래서 영화를 두 편 봤어요."


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "screen-sizes")
    out.mkdir(parents=True, exist_ok=True)
    for size in SIZES:
        for scale in ("1", "2"):
            env = {**os.environ, "QT_SCALE_FACTOR": scale}
            png = out / f"{size}@{scale}00.png"
            subprocess.run(
                [
                    sys.executable,
                    "main.py",
                    "--text",
                    TEXT,
                    "--view",
                    "cross",
                    "--layer",
                    "4",
                    "--head",
                    "1",
                    "--size",
                    size,
                    "--screenshot",
                    str(png),
                ],
                check=True,
                env=env,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
