"""Instructions per redraw step, counted by valgrind's callgrind: a measure of the redraw's work
that a busy or throttled machine does not change (the timed rows in ``python -m bench`` moved by
±30% between runs of the same code on a shared 2-core VM; these counts repeat within 0.1%).

    python -m bench.redraw_count [--kinds encoder decoder cross] [--steps 20]

For each view kind it runs itself under ``valgrind --tool=callgrind --instr-atstart=no``: the
window of :func:`bench.run.bench_redraw` (6 layers × 8 heads, S = T = 40, 1600 × 950) is built
and warmed up uncounted, then counting is switched on (``callgrind_control -i on``) for
``--steps`` single steps and their paint. Prints millions of instructions per step per kind.
Exits 2 with a reason when valgrind is not installed. It takes about a minute per kind.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from gui.state.view_kinds import attention_views


def _child(kind: str, steps: int) -> None:
    """Inside valgrind: build the window, warm up, count ``steps`` steps of ``kind``."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import pyqtgraph as pg
    from PySide6 import QtWidgets

    from bench.run import synthetic_translation
    from gui.window.main_window import MainWindow

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    pg.setConfigOptions(imageAxisOrder="row-major", background="w", foreground="k")
    n = 40
    win = MainWindow()
    win.resize(1600, 950)
    win.show()
    win.show_result(synthetic_translation(6, 8, n), n - 1)
    win.set_view(kind)
    app.processEvents()
    position = [n]

    def one_step():  # as bench_redraw: alternately to step n - 1 and n, then its paint
        position[0] = 2 * n - 1 - position[0]
        win.go_to_step(position[0])
        app.processEvents()

    for _ in range(4):
        one_step()
    control = ["callgrind_control", "-i"]
    subprocess.run([*control, "on", str(os.getpid())], capture_output=True, check=True)
    time.sleep(1)  # callgrind takes the request at its next check
    for _ in range(steps):
        one_step()
    subprocess.run([*control, "off", str(os.getpid())], capture_output=True, check=True)
    time.sleep(1)
    win.close()
    os._exit(0)  # Qt's teardown under valgrind is slow and counts nothing


def count(kind: str, steps: int) -> float:
    """Millions of instructions per redraw step of ``kind``. Raises RuntimeError when callgrind
    wrote no totals."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--instr-atstart=no",
                f"--callgrind-out-file={out}",
                sys.executable,
                "-m",
                "bench.redraw_count",
                "--child",
                kind,
                "--steps",
                str(steps),
            ],
            capture_output=True,
            text=True,
            timeout=1800,
        )
        text = open(out).read() if os.path.exists(out) else ""
    found = re.search(r"^totals:\s*(\d+)", text, re.M) or re.search(r"^summary:\s*(\d+)", text, re.M)
    if not found or int(found.group(1)) == 0:
        raise RuntimeError(f"callgrind counted nothing for {kind}")
    return int(found.group(1)) / steps / 1e6


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.redraw_count", description=__doc__.split("\n\n")[0])
    views = [v.name for v in attention_views()]
    p.add_argument("--kinds", nargs="+", default=views, choices=views)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--child", choices=views, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        _child(args.child, args.steps)
        return 0
    if not (shutil.which("valgrind") and shutil.which("callgrind_control")):
        print("skipped: valgrind (with callgrind_control) is not installed (apt-get install valgrind)")
        return 2
    for kind in args.kinds:
        print(f"redraw_minstr_{kind}: {count(kind, args.steps):.1f} M instructions per step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
