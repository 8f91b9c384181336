"""Start the app: register the bundled Hangul font, open the shipped model, optionally render
one state headlessly to a PNG (``--screenshot``) for slides, docs and tests."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from core import __version__
from core.defaults import DEFAULT_PRECISION, PRECISIONS
from core.locations import DEFAULT_MODEL, font_files, resolve_checkpoint
from gui.state import view_kinds
from gui.system_deps import missing_message
from gui.window.headless import PANELS
from gui.window.headless import add_arguments as add_panel_arguments
from gui.window.screen_fit import fit_to_screen, refit_with_frame

T0 = time.perf_counter()


def register_fonts() -> str:
    """Register NanumGothic (OFL), shipped in the ``assets`` package, so Hangul renders on machines
    without CJK fonts; returns the family."""
    from PySide6 import QtGui

    family = ""
    for ttf in font_files():
        fid = QtGui.QFontDatabase.addApplicationFont(str(ttf))
        if fid >= 0 and not family:
            family = QtGui.QFontDatabase.applicationFontFamilies(fid)[0]
    return family


def set_app_icon(app):
    """Give every window the shipped icon and name the desktop entry it belongs to (Wayland
    compositors match windows to ``attention-studio.desktop`` by that name); returns the QIcon."""
    from PySide6 import QtGui

    from gui.desktop_entry import APP_NAME, icon_file

    icon = QtGui.QIcon(str(icon_file()))
    app.setWindowIcon(icon)
    QtGui.QGuiApplication.setDesktopFileName(APP_NAME)
    return icon


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must look like 1600x950, got {text!r}") from None
    if not (200 <= w <= 10000 and 200 <= h <= 10000):
        raise argparse.ArgumentTypeError("size must be between 200 and 10000 pixels per side")
    return w, h


def _one_based(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"layers and heads are numbered from 1, got {value}")
    return value


def check_layer_head(view: str, layer: int, head: int, config) -> None:
    """``--layer``/``--head`` (1-based) against the model's ``config`` for ``view`` (a view's
    name); the same rule on every path (headless or interactive). Raises ValueError with the
    valid ranges."""
    kind = view_kinds.get(view)
    if kind.is_masks:
        return
    n_layers = kind.n_layers(config)
    if not (1 <= layer <= n_layers and 1 <= head <= config.n_heads):
        raise ValueError(f"--layer must be 1..{n_layers} and --head 1..{config.n_heads} (1-based) for the {view} view")


def _config_of(path: str):
    """The checkpoint's ModelConfig (config.json only), or None when it cannot be read (the
    load that follows reports why). Read through the same bounded reader as every checkpoint load
    (:func:`core.textio.read_json`): a FIFO, a huge or a deeply nested config is refused, never read."""
    from core.textio import read_json
    from core.transformer.config import ModelConfig

    try:
        return ModelConfig.from_dict(read_json(Path(path) / "config.json", inside=path))
    except (OSError, ValueError):
        return None


#: Qt platform messages that say nothing to a user: the offscreen platform (the deck, screenshots)
#: prints this one for every window whose size hints change.
NOISE = ("This plugin does not support propagateSizeHints()",)


def quiet_platform_notes() -> None:
    """Drop the Qt messages in :data:`NOISE`; every other message is printed as Qt would."""
    from PySide6 import QtCore

    previous = None

    def handler(kind, context, message) -> None:
        if message in NOISE:
            return
        if previous is not None:
            previous(kind, context, message)
        else:
            print(message, file=sys.stderr)

    previous = QtCore.qInstallMessageHandler(handler)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="Attention Studio: see every attention head.")
    p.add_argument("--version", action="version", version=f"attention-studio {__version__}")
    p.add_argument(
        "--checkpoint",
        default=DEFAULT_MODEL,
        help=f"checkpoint folder, or the name of a shipped or your own model (default {DEFAULT_MODEL})",
    )
    p.add_argument(
        "--install-desktop",
        action="store_true",
        help="add Attention Studio to the Linux application menu (launcher and icon in ~/.local/share)",
    )
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="cpu")
    p.add_argument(
        "--precision",
        choices=list(PRECISIONS),
        default=DEFAULT_PRECISION,
        help="run the model in fp32 (as trained), bf16, int8 (CPU) or int8-output (fp32 layers, "
        "int8 output projection, CPU); the maps are what it computes",
    )
    p.add_argument("--text", help="Korean sentence to translate at start")
    p.add_argument("--reference", help="English reference (teacher-forced view)")
    p.add_argument("--beam", type=int, default=1)
    p.add_argument("--batch-with", default=None, help="second Korean sentence: both run as one padded batch")
    p.add_argument("--no-causal-mask", action="store_true", help="with --reference: teacher forcing without the mask")
    p.add_argument(
        "--panel",
        choices=["fork", "reference", "beam", "heads", *PANELS],
        default=None,
        help="tab to show (ablate/compare/inside/positional: see the options below)",
    )
    add_panel_arguments(p)
    p.add_argument("--alignment", action="store_true", help="show the Alignment lines tab instead of the heatmap")
    p.add_argument("--pad-to", type=int, default=None)
    p.add_argument("--steps", type=int, default=None, help="show the state after N decoding steps")
    p.add_argument("--view", choices=view_kinds.cli_names(), default=view_kinds.get(view_kinds.DEFAULT).cli)
    p.add_argument("--layer", type=_one_based, default=1, help="layer to enlarge (1-based)")
    p.add_argument("--head", type=_one_based, default=1, help="head to enlarge (1-based)")
    p.add_argument("--font-size", type=int, default=11)
    p.add_argument("--colormap", choices=["viridis", "cividis", "inferno"], default="viridis")
    p.add_argument("--screenshot", help="render the window to this PNG and exit")
    p.add_argument("--present", action="store_true", help="presentation mode: one map full-screen (F11)")
    p.add_argument(
        "--projector",
        action="store_true",
        help="the main window in the projector layout: docks hidden, the map large (F9; without this flag the window "
        "opens in the layout it was last left in)",
    )
    p.add_argument(
        "--size",
        default="1600x950",
        type=_size,
        help="window size WxH (on screen: at most the screen's free area; --screenshot: exactly)",
    )
    p.add_argument(
        "--lecture",
        metavar="FILE",
        default=None,
        help="open a lecture file (TOML, docs/lectures.md) in Present mode: PgDn/PgUp or → ← step through it",
    )
    p.add_argument(
        "--deck",
        metavar="OUT",
        default=None,
        help="with --lecture: render every step to OUT (numbered 1920x1080 PNGs, one PDF, captions.md) and exit; "
        "with --learn: the frames and GIF",
    )
    p.add_argument(
        "--learn",
        metavar="TASK",
        default=None,
        help="with --deck OUT: train a small Transformer on TASK (copy, reverse, sort, numbers, or a TSV file of pairs) "
        "from seed 0 and write its snapshots to OUT as PNG frames and an animated GIF",
    )
    return p


def learn_deck(args) -> int:
    """``--learn TASK --deck OUT``: train offscreen, write the frames and the GIF, print where."""
    from core.errors import StudioError

    if args.deck is None or args.lecture is not None:
        print("error: --learn TASK needs --deck OUT (and no --lecture)", file=sys.stderr)
        return 2
    headless_platform(args.deck)
    missing = missing_message()
    if missing:
        print(missing, file=sys.stderr)
        return 2
    from PySide6 import QtGui, QtWidgets

    from gui.export.learn_frames import train_and_write
    from gui.widgets.colormap import Colormap

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])  # noqa: F841 (kept alive)
    font = QtGui.QFont(register_fonts())
    font.setPointSize(args.font_size)
    try:
        frames, gif = train_and_write(args.learn, args.deck, Colormap.named(args.colormap), font)
    except (StudioError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {len(frames)} frames ({frames[0].name} … {frames[-1].name}) and {gif}")
    return 0


def headless_platform(screenshot: str | None, env=os.environ, platform: str = sys.platform) -> None:
    """``--screenshot`` on a Linux machine without a display (no ``DISPLAY``/``WAYLAND_DISPLAY``)
    and no ``QT_QPA_PLATFORM`` chosen: render offscreen (Qt would abort, "could not connect to
    display"). Sets ``env["QT_QPA_PLATFORM"]``; does nothing otherwise."""
    if (
        screenshot
        and platform.startswith("linux")
        and not env.get("QT_QPA_PLATFORM")
        and not env.get("DISPLAY")
        and not env.get("WAYLAND_DISPLAY")
    ):
        env["QT_QPA_PLATFORM"] = "offscreen"


def read_lecture(args):
    """``--lecture FILE`` read and checked against the checkpoint's config.json (None without
    ``--lecture``); its problems are printed as warnings (the lecture still opens, each wrong step
    shows its problem). Raises ValueError / LectureError for options that cannot work together."""
    if args.lecture is None:
        if args.deck is not None:
            raise ValueError("--deck needs --lecture FILE (the steps to render)")
        return None
    clash = [
        opt
        for opt, given in (
            ("--text", args.text),
            ("--screenshot", args.screenshot),
            ("--panel", args.panel),
            ("--present", args.present),
        )
        if given
    ]
    if clash:
        raise ValueError(f"--lecture sets sentence, view and Present mode itself: drop {', '.join(clash)}")
    from gui.state.lecture import load_lecture
    from gui.state.lecture_check import check_lecture

    lecture = load_lecture(args.lecture)
    config = _config_of(args.checkpoint)
    for problem in check_lecture(lecture, config) if config is not None else lecture.problems():
        print(f"warning: {problem}", file=sys.stderr)
    return lecture


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.view = view_kinds.by_cli(args.view).name  # the view's --view name -> its name
    if args.install_desktop:
        from gui import desktop_entry

        for path in desktop_entry.install():
            print(f"wrote {path}")
        return 0
    if args.learn is not None:
        return learn_deck(args)
    args.checkpoint = resolve_checkpoint(args.checkpoint)
    if args.compare_checkpoint is not None:
        args.compare_checkpoint = resolve_checkpoint(args.compare_checkpoint)
    headless_platform(args.screenshot or args.deck)
    missing = missing_message()  # before Qt: its xcb plugin aborts the process when a library is missing
    if missing:
        print(missing, file=sys.stderr)
        return 2
    from core.decoding.strategy import as_strategy
    from core.errors import StudioError
    from gui.window import headless as headless_panels

    try:
        headless_panels.check(args)
        strategy = as_strategy(args.beam)  # --beam 1 (greedy) to MAX_BEAM: a one-line error otherwise
        lecture = read_lecture(args)
    except (StudioError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from PySide6 import QtWidgets

    from gui.widgets.pg_config import configure

    configure()  # MainWindow and Heatmap do it too (for scripts and tests that skip main)
    quiet_platform_notes()
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    family = register_fonts()
    icon = set_app_icon(app)
    from core.checkpoints.checkpoint import load_checkpoint
    from gui.state.live_commands import start
    from gui.window.main_window import MainWindow

    win = MainWindow(font_family=family, font_size=args.font_size)
    win.setWindowIcon(icon)
    win.resize(*(args.size if args.screenshot else fit_to_screen(args.size, app.primaryScreen())))
    win.set_colormap(args.colormap)
    if lecture is not None:  # the window on the lecture (Present mode), or the deck (--deck)
        from gui.window.lecture_deck import run_from_command_line

        return run_from_command_line(app, win, lecture, args)
    if args.text:  # one place fills the inputs; both paths below translate what they show
        win.fill_inputs(args.text, args.reference or "", args.pad_to or 0, args.batch_with or "", args.no_causal_mask, strategy)
    if args.panel in PANELS:
        headless_panels.prefill(win, args)
    elif args.panel:
        win.show_live_tab(args.panel)
    if args.alignment:
        win.show_alignment()
    if not args.screenshot:
        config = _config_of(args.checkpoint)
        try:
            if config is not None:
                check_layer_head(args.view, args.layer, args.head, config)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            win.close()
            return 2
        win.set_view(args.view)
        win.select(args.layer - 1, args.head - 1)  # clamped to the model once a result is shown
        win.show()
        from PySide6 import QtCore

        QtCore.QTimer.singleShot(300, win, lambda: refit_with_frame(win, tuple(args.size)))  # framed by then
        from gui.window.projector import remembered

        if args.projector or remembered():
            win.set_projector_layout(True)
        if args.present:
            from gui.window.view_menu import toggle_present

            toggle_present(win)
        win.translate_when_loaded = bool(args.text)
        win.step_when_translated = args.steps if args.text else None
        win.load_checkpoint(args.checkpoint, args.device, args.precision)
        return app.exec()
    try:  # synchronous path: deterministic, no thread timing involved
        ckpt = load_checkpoint(args.checkpoint, device=args.device, precision=args.precision)
        win.prepare_ahead = False  # one picture: the grid it shows is laid out by its result
        win.use_checkpoint(ckpt)
        check_layer_head(args.view, args.layer, args.head, ckpt.config)
        if args.text:
            live, state = start(ckpt, win.current_request())
            if live is not None:  # live: decode exactly --steps steps (all when not given)
                live.seek(10**9 if args.steps is None else args.steps)
                state = live.state()
            win.show_result(state, args.steps)
        win.set_view(args.view)
        win.select(args.layer - 1, args.head - 1)
        win.show()
        if args.projector:  # (a screenshot never follows the remembered layout: the same command, the same picture)
            win.set_projector_layout(True)
        if args.panel in PANELS:
            print(headless_panels.run(win, app, args, ckpt))
        shown = win
        if args.present:
            from gui.window.view_menu import toggle_present

            toggle_present(win)
            shown = win.present_window
            shown.showNormal()
            shown.resize(*args.size)
        from gui.export.settle import settled_grab

        if not settled_grab(shown).save(args.screenshot):  # axes size themselves as they paint: until that settles
            raise ValueError(f"could not write {args.screenshot}")
        print(f"saved {args.screenshot}")
        return 0
    except (StudioError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        win.close()
        import shiboken6

        shiboken6.delete(win)  # now, with its child windows (Present mode), not at interpreter exit after the app


if __name__ == "__main__":
    sys.exit(main())
