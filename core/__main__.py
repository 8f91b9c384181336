"""``python -m core translate|train|evaluate|average``: the scriptable side of Attention Studio.

Errors a user can cause (bad input, bad checkpoint, bad option) print one line to stderr
and exit with status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from core import __version__
from core.checkpoints.atomic_io import write_text_atomic  # stdlib only: the CLI starts light
from core.defaults import DEFAULT_MODEL, DEFAULT_PRECISION, MAX_BEAM, PRECISIONS
from core.errors import InputError, StudioError
from core.locations import resolve_checkpoint, user_models_dir
from core.textio import split_lines


def _translate(args) -> int:
    from core.checkpoints.checkpoint import load_checkpoint
    from core.decoding.confidence import LOW_CONFIDENCE_NATS
    from core.decoding.translate import translate

    strategy = cli_strategy(args)  # before the model loads: a bad option fails at once
    _check_experiment_options(args, strategy)
    check_batch_arguments(args)
    from core import cli_heads

    cli_heads.check_heads_options(args)
    heads = cli_heads.ablate_heads(args)
    inside = cli_heads.inside_spec(args)
    ckpt = load_checkpoint(args.checkpoint, device=args.device, precision=args.precision)
    if args.batch_with is not None:
        return _translate_batch(ckpt, args)
    if heads:
        return cli_heads.translate_ablated_cli(ckpt, args, heads)
    if inside:
        return cli_heads.translate_inside_cli(ckpt, args, inside)
    if args.text == "-":  # any bytes: invalid UTF-8 becomes U+FFFD, lines split on \n only (one output line each)
        texts = split_lines(sys.stdin.buffer.read().decode("utf-8", errors="replace"))
    else:
        texts = [args.text]
    if text_only(args, strategy):
        return _translate_text_only(ckpt, texts, strategy, args)
    status = 0
    for n, text in enumerate(texts, 1):
        where = f"line {n}: " if args.text == "-" else ""  # stdin: say which line a notice is about
        if args.text == "-" and not text.strip():
            print("", flush=True)  # a blank line stays a blank line (keeps outputs aligned)
            continue
        try:
            r = translate(
                ckpt,
                text,
                beam=strategy,
                pad_to=args.pad_to,
                reference=args.reference,
                top_k=args.top_k,
                prefix=args.prefix,
                causal=not args.no_causal_mask,
            )
            line = (
                json.dumps(cli_heads.add_heads(r, args, r.to_json()), ensure_ascii=False, allow_nan=False)
                if args.json
                else cli_heads.add_heads(r, args, r.translation)
            )
            if r.notice:
                print(f"{where}notice: {r.notice}", file=sys.stderr)
            if r.low_confidence:
                print(
                    f"{where}notice: low confidence: mean log P {r.confidence:.2f} nats/token (flagged below "
                    f"{LOW_CONFIDENCE_NATS}); check this translation",
                    file=sys.stderr,
                )
            if r.loss is not None and not args.json:
                print(
                    f"loss: {r.loss:.4f} nats/token, perplexity {r.perplexity:.2f}, causal mask {'on' if r.causal else 'OFF'}",
                    file=sys.stderr,
                )
        except (StudioError, ValueError) as exc:
            print(f"{where}error: {exc}", file=sys.stderr)
            status = 2
            if args.text != "-":
                return status
            line = json.dumps({"source": text, "error": str(exc)}, ensure_ascii=False) if args.json else ""
        print(line, flush=True)
    return status


def text_only(args, strategy) -> bool:
    """True when ``translate`` is asked for text only: stdin (``-``), no ``--json``, greedy or beam,
    and no option that needs the maps or one sentence at a time (heads, reference, prefix, pad-to)."""
    return (
        args.text == "-"
        and not args.json
        and not strategy.is_sampling
        and not args.heads
        and args.reference is None
        and args.prefix is None
        and args.pad_to is None
    )


def _translate_text_only(ckpt, texts: list[str], strategy, args) -> int:
    """The text-only fast path of ``translate -``: length-sorted batches of ``--batch-size`` sentences
    (and ``--max-tokens`` padded source positions), no attention maps; one output line per input
    line, in input order; the same notices on stderr as one sentence at a time, each after
    ``line N:``. Exit status 2 when
    a line could not be translated (its output line is empty)."""
    from core.decoding.confidence import LOW_CONFIDENCE_NATS
    from core.decoding.text_batch import translate_texts

    results = translate_texts(ckpt, texts, strategy, args.batch_size, args.max_tokens)
    status = 0
    for n, r in enumerate(results, 1):  # each notice names its input line (stdout may go to a file)
        if r.error:
            print(f"line {n}: error: {r.error}", file=sys.stderr)
            status = 2
        if r.notice:
            print(f"line {n}: notice: {r.notice}", file=sys.stderr)
        if r.low_confidence:
            print(
                f"line {n}: notice: low confidence: mean log P {r.confidence:.2f} nats/token (flagged below "
                f"{LOW_CONFIDENCE_NATS}); check this translation",
                file=sys.stderr,
            )
        print(r.translation)
    sys.stdout.flush()
    return status


def cli_strategy(args):
    """The :class:`~core.decoding.strategy.DecodingStrategy` of ``--beam`` or ``--sample`` (with
    ``--temperature``, ``--sample-top-k``, ``--top-p``, ``--seed``).

    Raises:
        InputError: a beam size out of range, ``--sample`` with ``--beam`` above 1, or a sampling
            setting out of range (one line, exit 2).
    """
    from core.decoding.strategy import DecodingStrategy, as_strategy

    sampling = (args.temperature, args.sample_top_k, args.top_p, args.seed)
    if not args.sample:
        if any(v is not None for v in sampling):
            raise InputError("--temperature, --sample-top-k, --top-p and --seed need --sample")
        return as_strategy(args.beam)
    if args.beam != 1:
        raise InputError("--sample draws one output: it cannot be combined with --beam")
    t, k, p, seed = (d if v is None else v for v, d in zip(sampling, (1.0, 0, 1.0, 0)))
    try:
        return DecodingStrategy.sampling(t, k, p, seed)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def _check_experiment_options(args, strategy) -> None:
    """One-line errors for option combinations the experiments do not support (``strategy``: the
    :class:`~core.decoding.strategy.DecodingStrategy` of ``--beam``)."""
    if args.no_causal_mask and args.reference is None:
        raise ValueError("--no-causal-mask needs --reference (it switches off the mask in teacher forcing)")
    if args.batch_with is not None:
        if args.text == "-":
            raise ValueError("--batch-with needs the first sentence as an argument, not '-'")
        clash = [
            name
            for name, on in (
                ("--beam", not strategy.is_greedy),
                ("--reference", args.reference is not None),
                ("--prefix", args.prefix is not None),
                ("--pad-to", args.pad_to is not None),
            )
            if on
        ]
        if clash:
            raise ValueError(f"--batch-with runs greedy decoding of two sentences; it cannot be combined with {', '.join(clash)}")


def _translate_batch(ckpt, args) -> int:
    from core.decoding.batch import translate_batch

    results = translate_batch(ckpt, [args.text, args.batch_with], top_k=args.top_k)
    for r in results:
        if r.notice:
            print(f"notice: {r.source.text}: {r.notice}", file=sys.stderr)
    if args.json:
        print(json.dumps({"batch": [r.to_json() for r in results]}, ensure_ascii=False, allow_nan=False), flush=True)
    else:
        for r in results:
            print(r.translation, flush=True)
    return 0


def _evaluate(args) -> int:
    import importlib.util

    from core.checkpoints.checkpoint import load_checkpoint
    from core.decoding.strategy import as_strategy
    from core.evaluation.evaluate import evaluate_files, write_json

    if importlib.util.find_spec("sacrebleu") is None:  # checked before any work, not after translating
        print("error: evaluate needs sacrebleu: pip install 'sacrebleu>=2.4' (or reinstall: pip install -e .)", file=sys.stderr)
        return 2
    strategy = as_strategy(args.beam)
    check_batch_arguments(args)
    ckpt = load_checkpoint(args.checkpoint, device=args.device)
    result = evaluate_files(
        ckpt, args.src, args.ref, beam=strategy, limit=args.limit, batch_size=args.batch_size, max_tokens=args.max_tokens
    )
    print(
        f"BLEU {result['bleu']:.2f}  chrF {result['chrf']:.2f}  ({result['lines']} lines, beam {args.beam}, "
        f"batch {args.batch_size}, {result['seconds']} s)"
    )
    print(f"  {result['bleu_signature']}\n  {result['chrf_signature']}")
    if args.json:
        write_json(result, args.json)
    return 0


def _check(args) -> int:
    from core.checkpoints.checkpoint import load_checkpoint
    from core.decoding.strategy import as_strategy
    from core.evaluation.lecture_check import COPY_FIXTURE, LECTURE_FIXTURE, run_checks

    strategy = as_strategy(args.beam)  # before the model loads
    for given, default in ((args.lecture, LECTURE_FIXTURE), (args.copy, COPY_FIXTURE)):
        if given is None and not default.is_file():  # an installed wheel carries no test fixtures
            raise InputError(
                f"{default.name}: the default fixtures are in the source repository (tests/fixtures); give --lecture and --copy"
            )
    r = run_checks(
        load_checkpoint(args.checkpoint, device=args.device),
        beam=strategy,
        lecture=args.lecture or LECTURE_FIXTURE,
        copy=args.copy or COPY_FIXTURE,
    )
    lec, cp = r["lecture"], r["copy"]
    if args.verbose:
        for row in lec["rows"]:
            print(f"{'ok ' if row['acceptable'] else '-- '} {row['source']} -> {row['output']}")
        for row in cp["rows"]:
            if row["missing"]:
                print(f"copy missing {row['missing']}: {row['source']} -> {row['output']}")
    print(
        f"lecture sentences acceptable {lec['acceptable']}/{lec['total']} ({100 * lec['rate']:.0f}%), "
        f"chrF {lec['chrf_first_reference']:.2f}; copy check {cp['copied']}/{cp['total']} "
        f"({100 * cp['rate']:.0f}%) (beam {args.beam})"
    )
    if args.json:
        write_text_atomic(args.json, json.dumps(r, indent=2, ensure_ascii=False) + "\n")
    return 0


def _average(args) -> int:
    from core.training.average import average_checkpoints

    out = average_checkpoints(args.checkpoints, args.out, force=args.force)
    print(f"averaged {len(args.checkpoints)} checkpoints into {out}")
    if args.run:
        from core.training.train import training_summary

        summary = training_summary(args.run) | {"averaged": [Path(p).name for p in args.checkpoints]}
        write_text_atomic(out / "training.json", json.dumps(summary, indent=2) + "\n")
        print(f"wrote {out / 'training.json'}")
    return 0


def _import_marian(args) -> int:
    from core.checkpoints.marian import import_marian

    src = Path(args.source)  # a folder ("." included) or a hub id "owner/name": the model is named after its last part
    out = Path(args.out) if args.out else user_models_dir() / (src.resolve().name if src.exists() else src.name)
    path = import_marian(args.source, out, force=args.force)
    if not args.out:
        print(f"imported as your model {path.name!r} ({path}): open it with --checkpoint {path.name}")
    return 0


def add_batch_arguments(p: argparse.ArgumentParser, where: str = "") -> None:
    """``--batch-size`` and ``--max-tokens``: sentences sorted by length, decoded in batches."""
    p.add_argument(
        "--batch-size",
        type=int,
        default=32,
        metavar="N",
        help=f"{where}translate sentences sorted by length in batches of at most N (greedy and beam; default 32)",
    )
    p.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        metavar="N",
        help=f"{where}also cap a batch at N padded source tokens (sentences x longest; default no cap)",
    )


def check_batch_arguments(args) -> None:
    """Raises InputError (one line, exit 2) for ``--batch-size`` or ``--max-tokens`` below 1, before the model loads."""
    from core.decoding.text_batch import length_batches

    length_batches([], args.batch_size, args.max_tokens)


CHECKPOINT_HELP = f"checkpoint folder, or the name of a shipped or your own model (default {DEFAULT_MODEL})"


def build_parser() -> argparse.ArgumentParser:
    from core.training import train as train_mod

    parser = argparse.ArgumentParser(prog="python -m core", description="Attention Studio command line")
    parser.add_argument("--version", action="version", version=f"attention-studio {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    t = sub.add_parser("translate", help="translate Korean text (or '-' for one sentence per stdin line)")
    t.add_argument("text")
    t.add_argument("--checkpoint", default=DEFAULT_MODEL, help=CHECKPOINT_HELP)
    t.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    t.add_argument(
        "--precision",
        choices=list(PRECISIONS),
        default=DEFAULT_PRECISION,
        help="inference precision: fp32 (as stored, default), bf16 (bfloat16 weights and products, "
        "float32 between them), int8 (dynamic int8 linear layers, CPU only) or int8-output "
        "(fp32 layers, int8 output projection, CPU only); "
        "attention weights are float32 in every case",
    )
    t.add_argument("--beam", type=int, default=1, help=f"beam size, 1 (greedy) to {MAX_BEAM}")
    t.add_argument(
        "--sample",
        action="store_true",
        help="sampling: draw each token from the model's distribution (see --temperature, --sample-top-k, "
        "--top-p, --seed); the same seed gives the same output",
    )
    t.add_argument(
        "--temperature", type=float, default=None, help="with --sample: divide the logits by T (default 1; 0 = greedy)"
    )
    t.add_argument(
        "--sample-top-k",
        type=int,
        default=None,
        help="with --sample: draw only among the K most probable tokens (default 0 = all)",
    )
    t.add_argument(
        "--top-p",
        type=float,
        default=None,
        help="with --sample: draw only among the most probable tokens whose mass reaches P (default 1 = all)",
    )
    t.add_argument("--seed", type=int, default=None, help="with --sample: the random seed (default 0)")
    t.add_argument("--pad-to", type=int, default=None, help="pad the source to N positions (padding demo)")
    t.add_argument("--reference", default=None, help="English reference: maps from one teacher-forced pass")
    t.add_argument("--top-k", type=int, default=5)
    t.add_argument("--prefix", default=None, help="force the output to start with the tokens of this English text, then continue")
    t.add_argument(
        "--no-causal-mask", action="store_true", help="with --reference: run the teacher-forced pass without the causal mask"
    )
    t.add_argument(
        "--batch-with",
        default=None,
        metavar="TEXT",
        help="translate a second sentence in the same padded batch (JSON: batch: [result, result])",
    )
    from core.cli_heads import add_arguments as add_heads_arguments

    add_heads_arguments(t)
    t.add_argument("--json", action="store_true", help="print one JSON object per sentence")
    add_batch_arguments(t, "with '-' and without --json (text only): ")

    e = sub.add_parser("evaluate", help="sacreBLEU BLEU and chrF of a checkpoint on a test set")
    e.add_argument("--checkpoint", default=DEFAULT_MODEL, help=CHECKPOINT_HELP)
    e.add_argument("--src", required=True)
    e.add_argument("--ref", required=True)
    e.add_argument("--beam", type=int, default=1, help=f"beam size, 1 (greedy) to {MAX_BEAM}")
    e.add_argument("--limit", type=int, default=None)
    e.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    e.add_argument("--json", default=None, help="also write the scores to this JSON file")
    add_batch_arguments(e)

    c = sub.add_parser("check", help="lecture sentences (acceptable %%) and copy check (numbers, names, URLs)")
    c.add_argument("--checkpoint", default=DEFAULT_MODEL, help=CHECKPOINT_HELP)
    c.add_argument("--beam", type=int, default=1)
    c.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    c.add_argument("--json", default=None, help="write every row and score to this JSON file")
    c.add_argument("--verbose", action="store_true", help="print every sentence and output")
    c.add_argument(
        "--lecture",
        nargs="+",
        default=None,
        help="sentence fixtures Korean<TAB>accepted | … (default tests/fixtures/lecture_sentences.tsv)",
    )
    c.add_argument(
        "--copy", nargs="+", default=None, help="copy fixtures Korean<TAB>must-copy | … (default tests/fixtures/copy_check.tsv)"
    )

    a = sub.add_parser("average", help="average the weights of several checkpoints of one run")
    a.add_argument("checkpoints", nargs="+")
    a.add_argument("--out", required=True)
    a.add_argument("--run", default=None, help="training run directory: also write training.json")
    a.add_argument(
        "--force",
        action="store_true",
        help="replace --out when it is an existing checkpoint folder (nothing else is ever replaced)",
    )

    m = sub.add_parser("import-marian", help="convert a Hugging Face Marian (OPUS-MT) model into a checkpoint")
    m.add_argument("source", help="a save_pretrained folder, or a hub id such as Helsinki-NLP/opus-mt-ko-en")
    m.add_argument(
        "--out",
        default=None,
        help="new checkpoint folder (must not exist or be empty); default: your model folder, named after "
        f"SOURCE ({user_models_dir()})",
    )
    m.add_argument(
        "--force",
        action="store_true",
        help="replace --out when it is an existing checkpoint folder (nothing else is ever replaced)",
    )

    train_mod.add_arguments(sub.add_parser("train", help="train a model (resumable)"))
    from core.training import adapt_cli

    adapt_cli.add_arguments(sub.add_parser("adapt", help="fine-tune a copy of a model on a few pairs (a TSV file)"))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    for name in ("checkpoint", "init_from"):  # a shipped or user model's name stands for its folder
        if getattr(args, name, None) is not None:
            setattr(args, name, resolve_checkpoint(getattr(args, name)))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    try:
        if args.command == "translate":
            return _translate(args)
        if args.command == "evaluate":
            return _evaluate(args)
        if args.command == "average":
            return _average(args)
        if args.command == "import-marian":
            return _import_marian(args)
        if args.command == "check":
            return _check(args)
        if args.command == "adapt":
            from core.training import adapt_cli

            return adapt_cli.run_from_args(args)
        from core.training import train as train_mod

        return train_mod.run_from_args(args)
    except (StudioError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
