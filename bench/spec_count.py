"""How many times one decoder step in the running window computes each part of what is drawn:
the view model builds one frame per change (gui/state/view_spec.py), so each should be 1.

    python -m bench.spec_count [--steps 5] [--kinds encoder decoder cross masks]

Builds the real window on a synthetic result (6 layers × 8 heads, 40 steps, no model), then for
each view kind steps back and forth ``--steps`` times with the step controls (each step painted) and
prints, per step, how often ``build_frame``, ``view_at``, ``masks_of`` (the masks given, cut from
the maps), ``AttentionMaps.truncated``, ``derived_maps`` and ``mask_cells`` ran (wrapped in every
module that imported them). ``count_calls`` is what ``tests/gui`` uses to hold the count at 1.
"""

from __future__ import annotations

import argparse
import collections
import collections.abc
import os
import sys

#: the functions counted, as (module, name)
COUNTED = (
    ("gui.state.view_spec", "build_frame"),
    ("gui.state.view_kinds", "view_at"),
    ("gui.state.view_data", "masks_of"),
    ("gui.state.view_data", "mask_cells"),
    ("gui.state.derived", "derived_maps"),
)


def count_calls(counts: collections.Counter) -> collections.abc.Callable[[], None]:
    """Count calls of :data:`COUNTED` and ``AttentionMaps.truncated`` into ``counts`` (wrapped
    in every loaded gui/core module that imported them by name). Returns a function that undoes it."""
    import importlib

    from core.transformer.maps import AttentionMaps

    originals = {name: getattr(importlib.import_module(mod), name) for mod, name in COUNTED}

    def wrap(name, fn):
        def counted(*a, **k):
            counts[name] += 1
            return fn(*a, **k)

        return counted

    wrapped = {name: wrap(name, fn) for name, fn in originals.items()}
    patched = []
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith(("gui.", "core.", "bench.")):
            for name, fn in originals.items():
                if getattr(module, name, None) is fn:
                    setattr(module, name, wrapped[name])
                    patched.append((module, name, fn))
    truncated = AttentionMaps.truncated
    AttentionMaps.truncated = wrap("AttentionMaps.truncated", truncated)

    def undo() -> None:
        for module, name, fn in patched:
            setattr(module, name, fn)
        AttentionMaps.truncated = truncated

    return undo


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.spec_count", description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--kinds", nargs="+", default=["encoder", "decoder", "cross", "masks"])
    args = ap.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6 import QtWidgets

    from bench.run import synthetic_translation
    from gui.app import register_fonts
    from gui.window.main_window import MainWindow

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    n = 40
    win = MainWindow(font_family=register_fonts())
    win.resize(1600, 950)
    win.show()
    win.show_result(synthetic_translation(6, 8, n), n - 1)
    app.processEvents()
    counts: collections.Counter = collections.Counter()
    count_calls(counts)
    print(f"calls per decoder step ({args.steps} steps each, synthetic 6 x 8 heads, {n} steps, 1600x950 offscreen)")
    position = n - 1  # the step shown; each move below changes it
    for kind in args.kinds:
        win.set_view(kind)
        app.processEvents()
        counts.clear()
        for _ in range(args.steps):
            position = 2 * n - 1 - position  # alternately to step n - 1 and n
            win.go_to_step(position)
            app.processEvents()
        per_step = {name: round(c / args.steps, 1) for name, c in sorted(counts.items())}
        print(f"{kind:8s} {per_step}")
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
