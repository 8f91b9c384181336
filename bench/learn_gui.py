"""The Learn tab's GUI thread while a toy task trains, and scrubbing its snapshots.

Opens the main window offscreen at 1600×950 with the Learn tab shown (no model needed), trains
``--task`` with the default live settings in the tab's worker, evaluating every ``--every``
updates, and meanwhile ticks a 10 ms QTimer on the GUI thread: the longest gap between two ticks
is the longest the GUI froze (goal: under 100 ms); the same is measured first with nothing
training, as a baseline of what the machine's other load does to the GUI thread. Then moves the snapshot slider to every
snapshot in turn (``--rounds`` times, in a shuffled order) and times each redraw on the GUI
thread, the paints it queued included, as ``bench.gui_result`` times a result (goal: under 50 ms).

    python -m bench.learn_gui [--task reverse] [--updates 100] [--every 10] [--rounds 5]
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import time


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6 import QtCore, QtWidgets

    from gui.app import register_fonts
    from gui.widgets import pg_config
    from gui.window.main_window import MainWindow

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", default="reverse", choices=["copy", "reverse", "sort", "numbers"])
    ap.add_argument("--updates", type=int, default=100)
    ap.add_argument("--every", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5, help="passes of the slider over every snapshot")
    ap.add_argument("--idle-s", type=float, default=20.0, help="seconds of ticks with nothing training first (baseline)")
    args = ap.parse_args(argv)

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    pg_config.configure()
    win = MainWindow(font_family=register_fonts())
    win.resize(1600, 950)
    win.show()
    panel = win.panel_named("learn")
    panel.popout.toggle()  # the tab in a window of its own, as a lecturer would show it
    panel.popout.window.resize(1400, 900)
    c = panel.controls
    c.task.setCurrentIndex(c.task.findData(args.task))
    c.every.setValue(args.every)
    c.until.setValue(args.updates)

    drawn: list[tuple[float, float]] = []  # (start, ms) of each snapshot's redraw on the GUI thread
    show = panel.show_index

    def timed_show(i: int) -> None:
        t = time.perf_counter()
        show(i)
        drawn.append((t, (time.perf_counter() - t) * 1000))

    panel.show_index = timed_show  # what a new snapshot calls (the slider keeps its own connection)
    ticks: list[float] = []
    full_gc: list[tuple[float, float]] = []  # (start, end) of each full (generation 2) collection

    def on_gc(phase: str, info: dict) -> None:
        if info["generation"] == 2:
            if phase == "start":
                full_gc.append((time.perf_counter(), float("nan")))
            elif full_gc:
                full_gc[-1] = (full_gc[-1][0], time.perf_counter())

    gc.callbacks.append(on_gc)
    timer = QtCore.QTimer()
    timer.setTimerType(QtCore.Qt.TimerType.PreciseTimer)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))

    def gap_line(ts: list[float]) -> str:
        gaps = sorted((b - a) * 1000 for a, b in zip(ts, ts[1:]))
        return (
            f"longest gap {gaps[-1]:.1f} ms, 99th percentile {gaps[int(0.99 * (len(gaps) - 1))]:.1f} ms, "
            f"median {statistics.median(gaps):.1f} ms ({len(gaps)} gaps)"
        )

    timer.start(10)  # the baseline: the same window, nothing training (what the machine's load alone does)
    end = time.perf_counter() + args.idle_s
    while time.perf_counter() < end:
        app.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 20)
        time.sleep(0.002)
    timer.stop()
    print(f"idle, {args.idle_s:.0f} s, GUI thread (10 ms timer): {gap_line(ticks)}")
    ticks.clear()
    t0 = time.perf_counter()
    panel.train()
    while not panel.snapshots:  # the model is built and evaluated at update 0 first
        app.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 20)
        time.sleep(0.002)
    timer.start(10)
    while panel.training is not None:
        app.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 20)
        time.sleep(0.002)
    timer.stop()
    train_s = time.perf_counter() - t0
    gaps = [(b - a) * 1000 for a, b in zip(ticks, ticks[1:])]
    print(
        f"training {args.task}, {panel.snapshots[-1].updates} updates, a snapshot every {args.every}: {train_s:.1f} s; "
        f"GUI thread (10 ms timer): {gap_line(ticks)}"
    )

    during = [ms for t, ms in drawn if ticks and t >= ticks[0]]
    print(f"redraw per new snapshot during training (GUI thread, without paint): max {max(during, default=0):.1f} ms")
    if os.environ.get("BENCH_VERBOSE"):
        worst = sorted(range(len(gaps)), key=gaps.__getitem__)[-5:]
        for k in worst:
            near = [round(ms) for t, ms in drawn if ticks[k] - 0.05 <= t <= ticks[k + 1]]
            gcs = [round((b - a) * 1000) for a, b in full_gc if ticks[k] - 0.05 <= a <= ticks[k + 1]]
            print(f"  gap {gaps[k]:.0f} ms at {ticks[k] - ticks[0]:.1f} s; redraws in it (ms): {near}; full gc (ms): {gcs}")
    n = len(panel.snapshots)
    order = [i for _ in range(args.rounds) for i in random.Random(0).sample(range(n), n)]
    times = []
    for i in order:
        if i == panel.slider.value():
            continue
        t = time.perf_counter()
        panel.slider.setValue(i)
        app.processEvents()  # the paints the redraw queued
        times.append((time.perf_counter() - t) * 1000)
    print(
        f"scrubbing {n} snapshots ({len(times)} moves of the slider), GUI thread per redraw incl. paint: "
        f"median {statistics.median(times):.1f} ms, max {max(times):.1f} ms"
    )
    win.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
