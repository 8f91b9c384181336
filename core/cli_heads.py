"""``python -m core translate``'s head-analysis options: --ablate, --inside and --heads (the derived
views: head table, mean over heads, encoder rollout). Errors are ValueError/StudioError, which
:func:`core.__main__.main` prints as one ``error:`` line with exit status 2."""

from __future__ import annotations

import json
import sys

from core.transformer.kinds import KINDS


def check_heads_options(args) -> None:
    """Before the model loads: --heads options that cannot work."""
    from core.analysis.head_stats import sort_column

    if not args.heads:
        if args.heads_kind is not None or args.heads_sort != "entropy" or args.heads_desc:
            raise ValueError("--heads-kind, --heads-sort and --heads-desc need --heads")
        return
    try:
        sort_column(args.heads_sort)
    except ValueError as e:
        raise ValueError(f"--heads-sort: {e}") from None
    if args.ablate is not None or args.inside is not None or args.batch_with is not None:
        raise ValueError("--heads cannot be combined with --ablate, --inside or --batch-with")


def ablate_heads(args) -> list[tuple[int, int]] | None:
    """--ablate parsed (1-based layer:head pairs; range-checked once the model is loaded)."""
    if args.ablate is None:
        if args.ablate_kind is not None:
            raise ValueError("--ablate-kind needs --ablate (the heads to ablate)")
        return None
    if args.batch_with is not None or args.text == "-":
        raise ValueError("--ablate translates one sentence given as an argument (not '-', not with --batch-with)")
    from core.analysis.ablation import parse_heads

    return parse_heads(args.ablate)


def inside_spec(args) -> tuple[int, int, int] | None:
    """--inside L:H:Q parsed (1-based; range-checked once the model is loaded)."""
    if args.inside is None:
        if args.inside_kind is not None:
            raise ValueError("--inside-kind needs --inside (layer:head:query)")
        return None
    if not args.json:
        raise ValueError("--inside needs --json (it adds the 'inside' object to the JSON)")
    if args.ablate is not None or args.batch_with is not None or args.text == "-" or args.reference is not None:
        raise ValueError("--inside works on one sentence given as an argument, without --ablate, --batch-with or --reference")
    parts = args.inside.split(":")
    if len(parts) != 3 or not all(p.strip().isdigit() for p in parts):
        raise ValueError(f"--inside {args.inside!r} is not layer:head:query (1-based), e.g. 2:3:4")
    return int(parts[0]), int(parts[1]), int(parts[2])


def translate_inside_cli(ckpt, args, spec) -> int:
    """One sentence's JSON plus ``inside``: q, k, scores, mask, weights and output of one head/query."""
    from core.analysis.inside import inside_step

    step, r = inside_step(
        ckpt,
        args.text,
        args.inside_kind or "enc",
        *spec,
        beam=args.beam,
        pad_to=args.pad_to,
        top_k=args.top_k,
        prefix=args.prefix,
    )
    if r.notice:
        print(f"notice: {r.notice}", file=sys.stderr)
    print(json.dumps(r.to_json() | {"inside": step.to_json()}, ensure_ascii=False, allow_nan=False), flush=True)
    return 0


def translate_ablated_cli(ckpt, args, heads) -> int:
    """One sentence, unablated and ablated: stdout the ablated translation (or JSON with both)."""
    from core.analysis.ablation import translate_ablated

    r = translate_ablated(
        ckpt,
        args.text,
        heads,
        args.ablate_kind or "enc",
        beam=args.beam,
        pad_to=args.pad_to,
        reference=args.reference,
        top_k=args.top_k,
        prefix=args.prefix,
        causal=not args.no_causal_mask,
    )
    if r.ablated.notice:
        print(f"notice: {r.ablated.notice}", file=sys.stderr)
    if args.json:
        print(json.dumps(r.to_json(), ensure_ascii=False, allow_nan=False), flush=True)
        return 0
    o, a = r.original, r.ablated
    spec = ",".join(f"{la}:{h}" for la, h in heads)
    # free-running results always carry log P (None only in teacher forcing, which --ablate does not run)
    lp_o, lp_a, lp_same = (float("nan") if v is None else v for v in (o.logprob, a.logprob, r.original_output_logprob))
    print(f"unablated: {o.translation}  (log P {lp_o:.4f} nats)", file=sys.stderr)
    print(
        f"ablated {r.kind} {spec}: {a.translation}  (log P {lp_a:.4f} nats, change "
        f"{lp_a - lp_o:+.4f}; unablated output under ablation {lp_same:.4f})",
        file=sys.stderr,
    )
    print(a.translation, flush=True)
    return 0


def add_heads(r, args, out):
    """With --heads: the JSON dict gains ``derived`` (head tables, mean over heads, rollout), or the
    text line gains the head table of --heads-kind sorted by --heads-sort."""
    if not args.heads:
        return out
    from core.analysis.head_stats import derived_json, format_table, head_table, sort_heads

    sort, desc = args.heads_sort, args.heads_desc
    if isinstance(out, dict):
        return out | {"derived": derived_json(r.maps, sort, desc)}
    kinds = [args.heads_kind] if args.heads_kind else list(KINDS)
    return "\n".join([out] + [format_table(sort_heads(head_table(r.maps, k), sort, desc)) for k in kinds])


def add_arguments(t) -> None:
    """The translate sub-command's head-analysis options (--ablate, --inside, --heads)."""
    t.add_argument(
        "--ablate",
        default=None,
        metavar="L:H,...",
        help="zero these heads' outputs before W^O (1-based layer:head, e.g. 2:3,3:1) and compare with the unablated run",
    )
    t.add_argument(
        "--ablate-kind",
        choices=list(KINDS),
        default=None,
        help="which attention --ablate means: encoder self (default), decoder self or cross",
    )
    t.add_argument(
        "--inside",
        default=None,
        metavar="L:H:Q",
        help="with --json: the inside of one attention step (1-based layer:head:query): q, k, v, "
        "scores q·k/√d_k, mask, softmax weights (= the map's row) and the head's output",
    )
    t.add_argument(
        "--inside-kind",
        choices=list(KINDS),
        default=None,
        help="which attention --inside means: encoder self (default), decoder self or cross",
    )
    t.add_argument(
        "--heads",
        action="store_true",
        help="also the head table (entropy in nats, previous/same/next/sink share, monotone, label); "
        "with --json: derived = tables, mean over heads per layer, encoder rollout",
    )
    t.add_argument(
        "--heads-sort",
        default="entropy",
        metavar="COLUMN",
        help="sort the head table by this column, a field name or the printed header (entropy, max, "
        "prev, same, next, sink, mono[tone], label, L/layer, H/head), ascending",
    )
    t.add_argument("--heads-desc", action="store_true", help="sort the head table descending")
    t.add_argument("--heads-kind", choices=list(KINDS), default=None, help="text output: only this kind's table")
