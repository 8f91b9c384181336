"""``main.py --panel ablate|compare|inside|positional``: open one of the analysis tabs (Ablate
heads, Compare, Inside one step, Positional encoding) at start, and with ``--screenshot`` fill it
and wait for its answer before the PNG is written (slides).

Options: ``--ablate L:H,... [--ablate-kind enc|dec|cross]`` (1-based, parsed and range-checked
with :func:`core.analysis.ablation.parse_heads` / ``ablation_spec``, as ``translate --ablate``),
``--compare-text B`` (Compare: the main sentence against B) or ``--compare-checkpoint DIR`` (the
main sentence on a second model), ``--query N`` (Inside one step: the query row, 1-based; the head
is ``--layer``/``--head`` of ``--view``). Errors are ValueError / StudioError (``error:``, exit 2).
"""

from __future__ import annotations

import time

from core.transformer.kinds import KINDS as ATTENTION_KINDS

PANELS = ("ablate", "compare", "inside", "positional")
WAIT_S = 120.0


def add_arguments(p) -> None:
    """The options of the analysis tabs (``--panel`` itself is in :func:`gui.app.build_parser`)."""
    p.add_argument(
        "--ablate",
        default=None,
        metavar="L:H,...",
        help="with --panel ablate: heads to ablate (1-based layer:head, e.g. 2:3,3:1)",
    )
    p.add_argument(
        "--ablate-kind",
        choices=list(ATTENTION_KINDS),
        default="enc",
        help="with --ablate: encoder self (default), decoder self or cross-attention",
    )
    p.add_argument("--compare-text", default=None, help="with --panel compare: sentence B (A is --text)")
    p.add_argument("--compare-checkpoint", default=None, help="with --panel compare: checkpoint B (--text on both models)")
    p.add_argument("--query", type=int, default=None, help="with --panel inside: the query row (1-based)")


def check(args) -> None:
    """Option combinations that cannot work (before any model loads). Raises ValueError."""
    from core.analysis.ablation import parse_heads

    need = {
        "ablate": args.ablate is not None,
        "compare": args.compare_text is not None or args.compare_checkpoint is not None,
        "inside": args.query is not None,
    }
    for panel, given in need.items():
        if given and args.panel != panel:
            opts = {"ablate": "--ablate", "compare": "--compare-text/--compare-checkpoint", "inside": "--query"}
            raise ValueError(f"{opts[panel]} needs --panel {panel}")
    if args.ablate is not None:
        parse_heads(args.ablate)
    if args.compare_text is not None and args.compare_checkpoint is not None:
        raise ValueError("give --compare-text or --compare-checkpoint, not both")
    if args.query is not None and args.query < 1:
        raise ValueError(f"--query is numbered from 1, got {args.query}")
    if args.screenshot and args.panel in ("ablate", "compare") and not args.text:
        raise ValueError(f"--panel {args.panel} with --screenshot needs --text (the sentence to run)")
    if args.screenshot and args.panel == "ablate" and args.ablate is None:
        raise ValueError("--panel ablate with --screenshot needs --ablate L:H,... (the heads)")
    if args.screenshot and args.panel == "compare" and args.compare_text is None and args.compare_checkpoint is None:
        raise ValueError("--panel compare with --screenshot needs --compare-text or --compare-checkpoint")


def prefill(win, args) -> None:
    """Show the tab of ``--panel`` and put the options into its fields (nothing runs yet)."""
    tabs = win.live.tabs
    panel = {
        "ablate": win.analysis.ablation,
        "compare": win.analysis.compare,
        "inside": win.inside_panel,
        "positional": win.positional_panel,
    }[args.panel]
    tabs.setCurrentWidget(panel)
    if args.panel == "ablate" and args.ablate is not None:
        p = win.analysis.ablation
        p.kind.setCurrentIndex(p.kind.findData(args.ablate_kind))
        p.heads.setText(args.ablate)
        p.sync_boxes(args.ablate)
    elif args.panel == "compare":
        c = win.analysis.compare
        if args.compare_checkpoint is not None:
            c.set_mode("checkpoints")
            c.path_b.setText(args.compare_checkpoint)
        elif args.compare_text is not None:
            c.set_mode("inputs")
            c.text_b.setText(args.compare_text)


def _wait(app, done, what: str) -> None:
    end = time.monotonic() + WAIT_S
    while not done():
        if time.monotonic() > end:
            raise ValueError(f"--panel {what}: no answer within {WAIT_S:.0f} s")
        app.processEvents()
        time.sleep(0.01)


def _run_analysis(win, app, panel: str, start, tab, shown):
    """Start the Ablate heads or Compare tab's run (``panel`` "ablate" or "compare") with ``start``, as
    its button would, wait until the analysis tabs answer for ``panel`` and return ``shown()`` (the
    tab's result). Raises ValueError with the tab's status message when it shows no result."""
    answered = []
    win.analysis.answered.connect(answered.append)
    start()
    _wait(app, lambda: panel in answered, panel)
    if shown() is None:
        raise ValueError(tab.status.text().lstrip("⚠ "))
    return shown()


def run(win, app, args, ckpt) -> str:
    """Headless: the model is loaded and the main result shown. Fill the tab of ``--panel``, wait
    for its answer (computed by the app's own worker, as a click would) and return one line that
    says what the tab shows. Raises ValueError with the tab's error message."""
    from core.analysis.ablation import ablation_spec, parse_heads

    cfg = ckpt.config
    if args.panel == "ablate":
        n_layers = cfg.n_encoder_layers if args.ablate_kind == "enc" else cfg.n_decoder_layers
        ablation_spec(parse_heads(args.ablate), args.ablate_kind, n_layers, cfg.n_heads)
    prefill(win, args)
    if args.panel == "ablate":
        p = win.analysis.ablation
        r = _run_analysis(win, app, "ablate", win.analysis.ablate, p, lambda: p.report).result
        spec = ",".join(f"{la}:{h}" for la, h in r.heads)
        return f"ablate {r.kind} {spec}: {r.ablated.translation} (unablated: {r.original.translation})"
    if args.panel == "compare":
        c = win.analysis.compare
        out = _run_analysis(win, app, "compare", win.analysis.run_compare, c, lambda: c.outcome)
        return f"compare: A {out.a.translation} | B {out.b.translation}"
    if args.panel == "inside":
        ip = win.inside_panel
        if args.query is not None:
            ip.refresh()  # sizes the query range for the shown map
            if args.query > ip.query.maximum():
                raise ValueError(f"--query must be 1..{ip.query.maximum()} for this map")
            ip.query.setValue(args.query)
        _wait(app, lambda: ip.step is not None or ip.message.text().startswith("⚠") or ip.shows_message_only, "inside")
        if ip.step is None:
            raise ValueError(ip.message.text().lstrip("⚠ "))
        st = ip.step
        return f"inside {st.kind} layer {st.layer} head {st.head} query {st.query} {st.query_token!r}"
    if args.panel == "positional":
        pp = win.positional_panel
        _wait(app, lambda: pp.tables is not None or pp.message.text().startswith("⚠"), "positional")
        pp.refresh()
        if pp.tables is None:
            raise ValueError(pp.message.text().lstrip("⚠ "))
        return f"positional {pp.tables['kind']}: {pp.matrix.shape[0]} positions × {pp.matrix.shape[1]}"
    return ""
