"""GUI-thread work per translation result, as a lecturer pressing Translate sees it.

Opens the main window offscreen at 1600×950 on a checkpoint, translates sentences one after the other
in each attention view, and times on the GUI thread everything one result costs: the result slot
(``MainWindow._on_translated``: view model, grid, enlarged map, mask panel, derived cells) plus the
paint events it queues. Prints the median and maximum in milliseconds (goal: under 100 ms each).

    python -m bench.gui_result [--checkpoint DIR] [--rounds 2] [--profile [all|first]]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

SENTENCES = ["나는 학생입니다.", "비가 와서 오늘은 집에서 영화를 봤어요.", "고양이가 의자 위에서 자고 있어요.", "감사합니다."]


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6 import QtCore, QtWidgets

    from core.defaults import DEFAULT_CHECKPOINT
    from gui.state.view_kinds import attention_views
    from gui.widgets import pg_config
    from gui.window.main_window import MainWindow

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", default=str(DEFAULT_CHECKPOINT))
    ap.add_argument("--rounds", type=int, default=2, help="times each sentence is translated per view")
    ap.add_argument(
        "--profile",
        nargs="?",
        const="all",
        choices=("all", "first"),
        help="print a cProfile summary of the timed work (of every result, or of the first only)",
    )
    args = ap.parse_args(argv)

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    pg_config.configure()
    win = MainWindow()
    win.resize(1600, 950)
    win.show()
    win.load_checkpoint(args.checkpoint, "cpu")
    t0 = time.time()
    while win.model_info == "no model" and time.time() - t0 < 120:
        app.processEvents()
        time.sleep(0.01)
    t0 = time.time()
    while time.time() - t0 < 1.0:  # as a lecturer types: the grids laid out after the load are done
        app.processEvents()
        time.sleep(0.01)

    import cProfile
    import pstats

    prof = cProfile.Profile() if args.profile else None
    times: list[float] = []

    class Probe(QtCore.QObject):
        @QtCore.Slot(int, object, float)
        def result(self, *a):
            t = time.perf_counter()
            profiled = prof is not None and (args.profile == "all" or not times)
            if profiled:
                prof.enable()
            slot(*a)
            app.processEvents()  # the paints the result queued
            if profiled:
                prof.disable()
            times.append((time.perf_counter() - t) * 1000)

    probe = Probe()
    slot = win.intercept_results(probe.result)  # the window's own result slot, timed from the probe on the GUI thread
    for view in (v.name for v in attention_views()):
        win.set_view(view)
        for text in SENTENCES * args.rounds:
            win.set_input_text(text)
            n = len(times)
            win.translate()
            t0 = time.time()
            while len(times) == n and time.time() - t0 < 120:
                app.processEvents()
                time.sleep(0.002)
    first, rest = times[0], times[1:]
    if os.environ.get("BENCH_VERBOSE"):
        print("per result (ms):", [round(t) for t in times])
    print(
        f"GUI-thread work per result, {os.path.basename(args.checkpoint.rstrip('/'))}, 1600x950 offscreen: "
        f"median {statistics.median(rest):.1f} ms, max {max(rest):.1f} ms over {len(rest)} results "
        f"(first result, which builds the grid: {first:.1f} ms)"
    )
    if prof:
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
    win.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
