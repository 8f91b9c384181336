"""Inference precision (fp32, bf16, int8, int8-output): agreement with fp32 and speed, on the app's path.

``python -m bench.precision [--quick] [--checkpoint ko-en-nc] [--repeats N] [--no-opus]``

Agreement (the shipped checkpoint, default ``ko-en-nc``; sentences: the Korean column of
tests/fixtures/fresh_everyday.tsv, fresh_lecture.tsv and lecture_sentences.tsv, 207 in all, the
first reference for chrF): each sentence is decoded greedily on the app's path
(:class:`~core.decoding.session.DecodeSession`, every attention weight captured) at fp32 and at
each other precision.

- ``identical``: sentences whose output ids equal fp32's;
- ``attn_max_abs`` / ``attn_mean_abs``: the precision's session is forced through fp32's output
  ids (so the maps have the same shape and the same decoder inputs), and its encoder, decoder and
  cross maps are compared with fp32's over every visible cell (not masked; the causal triangle of
  the decoder's own maps): the largest and the mean absolute difference, in probability units;
- ``row_sum_err``: the largest |Σ row − 1| of any captured row at that precision (free-running);
- ``chrf`` / ``chrf_diff``: sacreBLEU corpus chrF of the outputs, and minus fp32's.

Speed: ``ms_per_token`` = wall time of the app path over all sentences / tokens produced (EOS
included), median over ``--repeats`` passes, precisions interleaved within each pass so a change
in the machine's load hits all alike; ``cpu_ms_per_token`` the same with this process's CPU time
(steadier on a shared machine: it leaves out waiting for a core, not memory contention).
At OPUS-MT size (a random Marian model of opus-mt-ko-en's shape, built as in bench/opus_size.py,
EOS suppressed, 42 tokens of one sentence): the app path and the plain path (batched greedy, no
weights) per precision, and CTranslate2 float32 / int8 on the same weights when ``ctranslate2`` is
installed. One CPU thread for every timing (the machine is shared); ``--threads`` changes it.

Prints a markdown table, then one JSON object as the last line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import torch

from bench import checkout
from core.defaults import PRECISIONS

FILES = ("fresh_everyday.tsv", "fresh_lecture.tsv", "lecture_sentences.tsv")


def read_sentences(files=FILES) -> tuple[list[str], list[str]]:
    """Korean sources and first references from the fixture TSVs (``#`` lines skipped)."""
    src, ref = [], []
    for name in files:
        for line in (checkout() / "tests" / "fixtures" / name).read_text(encoding="utf-8").splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            ko, en = line.split("\t")[:2]
            src.append(ko)
            ref.append(en.split(" | ")[0].strip())
    return src, ref


def _session(ckpt, text: str, force: list[int] | None = None):
    from core.decoding.session import DecodeSession

    s = DecodeSession(ckpt.model, ckpt.src_tokenizer, ckpt.tgt_tokenizer, text)
    if force is None:
        s.run()
    else:
        for tid in force:
            s.step(force=tid)
    return s


def _visible(maps) -> list[torch.Tensor]:
    """The maps' visible cells, flattened: encoder (all keys that are not pads), decoder self
    (causal triangle), cross (non-pad keys)."""
    enc = maps.encoder_self[..., ~maps.src_key_padding_mask]
    n = maps.decoder_self.size(-1)
    tri = torch.ones(n, n, dtype=torch.bool).tril()
    return [enc.flatten(), maps.decoder_self[..., tri].flatten(), maps.cross[..., ~maps.src_key_padding_mask].flatten()]


def _row_sum_err(maps) -> float:
    return max(float((m.sum(-1) - 1).abs().max()) for m in (maps.encoder_self, maps.decoder_self, maps.cross))


def agreement(path: str, sentences: list[str], refs: list[str], precisions=PRECISIONS) -> dict:
    """Per precision: identical outputs, attention differences and chrF against fp32 (see module doc)."""
    import sacrebleu

    from core.checkpoints.checkpoint import load_checkpoint

    out: dict = {}
    ref_ck = load_checkpoint(path, device="cpu")
    base = [_session(ref_ck, t) for t in sentences]
    base_maps = [s.maps() for s in base]
    base_ids = [s.output_ids for s in base]
    base_hyp = [s.translation for s in base]
    base_chrf = sacrebleu.corpus_chrf(base_hyp, [refs]).score
    out["fp32"] = {
        "sentences": len(sentences),
        "identical": len(sentences),
        "attn_max_abs": 0.0,
        "attn_mean_abs": 0.0,
        "row_sum_err": max(_row_sum_err(m) for m in base_maps),
        "chrf": base_chrf,
        "chrf_diff": 0.0,
    }
    for p in precisions:
        if p == "fp32":
            continue
        ck = load_checkpoint(path, device="cpu", precision=p)
        free = [_session(ck, t) for t in sentences]
        identical = sum(s.output_ids == ids for s, ids in zip(free, base_ids))
        row_err = max(_row_sum_err(s.maps()) for s in free)
        finite = all(bool(torch.cat(_visible(s.maps())).isfinite().all()) for s in free)
        diffs = []
        for t, ids, bm in zip(sentences, base_ids, base_maps):
            forced = _session(ck, t, force=ids).maps()
            diffs.append(torch.cat([(a - b).abs() for a, b in zip(_visible(forced), _visible(bm))]))
        d = torch.cat(diffs)
        chrf = sacrebleu.corpus_chrf([s.translation for s in free], [refs]).score
        out[p] = {
            "sentences": len(sentences),
            "identical": identical,
            "attn_max_abs": float(d.max()),
            "attn_mean_abs": float(d.mean()),
            "row_sum_err": row_err,
            "finite": finite,
            "chrf": chrf,
            "chrf_diff": chrf - base_chrf,
        }
    return out


def _timed(fn) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of one ``fn()`` call. With one thread the CPU
    time leaves out the time the process waited for a core (the machine is shared)."""
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def _summary(runs: list[tuple[float, float]], tokens: int, prefix: str = "") -> dict:
    """Median wall and CPU ms/token of ``runs`` and the wall ms/token of each run."""
    return {
        f"{prefix}ms_per_token": statistics.median(w for w, _ in runs) / tokens * 1000,
        f"{prefix}cpu_ms_per_token": statistics.median(c for _, c in runs) / tokens * 1000,
        f"{prefix}runs_ms_per_token": [round(w / tokens * 1000, 3) for w, _ in runs],
    }


def app_speed(path: str, sentences: list[str], repeats: int, precisions=PRECISIONS) -> dict:
    """Median ms/token of the app path over ``sentences`` per precision (interleaved passes)."""
    from core.checkpoints.checkpoint import load_checkpoint

    cks = {p: load_checkpoint(path, device="cpu", precision=p) for p in precisions}
    tokens = {p: sum(len(_session(ck, t).steps) for t in sentences) for p, ck in cks.items()}  # + warm-up
    times: dict[str, list[tuple[float, float]]] = {p: [] for p in precisions}
    for _ in range(repeats):
        for p, ck in cks.items():
            times[p].append(_timed(lambda ck=ck: [_session(ck, t) for t in sentences]))
    return {p: {"tokens": tokens[p], **_summary(times[p], tokens[p])} for p in precisions}


@contextmanager
def opus_checkpoint():
    """A temporary folder with ``hf/`` (a random Marian model of OPUS-MT ko-en's size, see
    bench/opus_size.py) and ``ours/`` (its ``import-marian`` checkpoint); removed afterwards."""
    from bench.opus_size import build_hf
    from core.checkpoints.marian import import_marian

    with tempfile.TemporaryDirectory(prefix="opus-precision-") as tmp:
        tmp = Path(tmp)
        build_hf(tmp / "hf")
        import_marian(str(tmp / "hf"), tmp / "ours", log=lambda m: None)
        yield tmp


def profile_app(precision: str, decodes: int = 3, top: int = 15) -> None:
    """Print a cProfile of ``decodes`` greedy app-path decodes (DecodeSession, every weight
    captured) of the OPUS-MT-size random model at ``precision``, after one warm-up decode: the
    functions by own time, then the project's functions by cumulative time."""
    import cProfile
    import pstats

    from bench.opus_size import TEXT
    from core.checkpoints.checkpoint import load_checkpoint

    with opus_checkpoint() as tmp:
        ck = load_checkpoint(tmp / "ours", device="cpu", precision=precision)
        n = len(_session(ck, TEXT).steps)
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(decodes):
            _session(ck, TEXT)
        prof.disable()
    print(f"{precision}: {decodes} decodes × {n} tokens, {torch.get_num_threads()} thread(s)")
    stats = pstats.Stats(prof)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(r"/core/", top)


def opus_speed(repeats: int, precisions=PRECISIONS) -> dict:
    """ms/token at OPUS-MT size (random weights), app and plain path per precision, CTranslate2 if present."""
    try:
        import sentencepiece  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as exc:
        print(f"OPUS-size precision benchmark skipped: needs the import extra: {exc}", file=sys.stderr)
        return {}
    from bench.opus_size import TEXT
    from core.checkpoints.checkpoint import load_checkpoint
    from core.decoding.session import greedy_batch

    out: dict = {}
    with opus_checkpoint() as tmp:
        cks = {p: load_checkpoint(tmp / "ours", device="cpu", precision=p) for p in precisions}
        ref = _session(cks["fp32"], TEXT) if "fp32" in cks else None
        runs: dict = {}
        for p, ck in cks.items():
            s = _session(ck, TEXT)  # warm-up
            out[p] = {"tokens": len(s.steps), "same_as_fp32": None if ref is None else s.output_ids == ref.output_ids}
            runs[(p, "app")] = []
            runs[(p, "plain")] = []
        ct2 = _ct2_translators(tmp, cks[next(iter(cks))], ref)
        for name in ct2:
            runs[(name, "ct2")] = []
        for _ in range(repeats):
            for p, ck in cks.items():
                runs[(p, "app")].append(_timed(lambda ck=ck: _session(ck, TEXT)))
                plain = lambda ck=ck: greedy_batch(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, [TEXT])  # noqa: E731
                runs[(p, "plain")].append(_timed(plain))
            for name, (fn, _) in ct2.items():
                runs[(name, "ct2")].append(_timed(fn))
        for (name, kind), ts in runs.items():
            row = out.setdefault(name, {})
            n = ct2[name][1] if kind == "ct2" else out[name]["tokens"]
            row.update(_summary(ts, n, f"{kind}_"))
            if kind == "ct2":
                row["tokens"] = n
    return out


def _ct2_translators(tmp: Path, ck, ref) -> dict:
    """{"ct2_float32": (run, tokens), "ct2_int8": …} on the same weights, or {} without ctranslate2."""
    try:
        import ctranslate2
        from ctranslate2.converters import TransformersConverter
    except ImportError as exc:
        print(f"CTranslate2 comparison skipped: pip install ctranslate2 ({exc})", file=sys.stderr)
        return {}
    TransformersConverter(str(tmp / "hf")).convert(str(tmp / "ct2"), force=True)
    src = [ck.src_tokenizer.pieces[i] for i in ref.source.ids[:-1]] + ["</s>"]
    n = len(ref.steps)
    out = {}
    for ct in ("float32", "int8"):
        tr = ctranslate2.Translator(str(tmp / "ct2"), device="cpu", inter_threads=1, intra_threads=1, compute_type=ct)
        fn = lambda tr=tr: tr.translate_batch([src], beam_size=1, max_decoding_length=n)  # noqa: E731
        out[f"ct2_{ct}"] = (fn, len(fn()[0].hypotheses[0]))
    return out


def table(agree: dict, speed: dict, opus: dict) -> str:
    nan = float("nan")
    lines = [
        "| precision | identical | attn max abs | attn mean abs | row-sum err | chrF | chrF diff | ms/token (CPU) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for p in speed or agree:
        a, sp = agree.get(p, {}), speed.get(p, {})
        ms = f"{sp.get('ms_per_token', nan):.3g} ({sp.get('cpu_ms_per_token', nan):.3g})"
        lines.append(
            f"| {p} | {a.get('identical', '')}/{a.get('sentences', '')} | {a.get('attn_max_abs', nan):.3g} | "
            f"{a.get('attn_mean_abs', nan):.3g} | {a.get('row_sum_err', nan):.2g} | {a.get('chrf', nan):.2f} | "
            f"{a.get('chrf_diff', nan):+.2f} | {ms} |"
        )
    if opus:
        lines += ["", "| OPUS-MT size | app ms/token (CPU) | plain ms/token (CPU) | same tokens as fp32 |", "|---|---|---|---|"]
        for name, r in opus.items():
            kind = "ct2" if name.startswith("ct2") else "app"
            lines.append(
                f"| {name} | {r.get(f'{kind}_ms_per_token', nan):.3g} ({r.get(f'{kind}_cpu_ms_per_token', nan):.3g}) | "
                f"{r.get('plain_ms_per_token', nan):.3g} ({r.get('plain_cpu_ms_per_token', nan):.3g}) | "
                f"{r.get('same_as_fp32', '')} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m bench.precision", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--checkpoint", default="ko-en-nc", help="checkpoint folder or model name (default ko-en-nc)")
    p.add_argument("--repeats", type=int, default=None, help="timed passes per precision (default 5, --quick 1)")
    p.add_argument("--quick", action="store_true", help="one timed pass, 40 sentences")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads for every measurement (default 1)")
    p.add_argument("--no-opus", action="store_true", help="skip the OPUS-MT-size timing")
    p.add_argument("--no-agreement", action="store_true", help="timings only")
    p.add_argument(
        "--profile",
        choices=list(PRECISIONS),
        default=None,
        help="only profile (cProfile) app-path decodes of the OPUS-MT-size model at this precision",
    )
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.profile:
        profile_app(args.profile)
        return 0
    from core.locations import resolve_checkpoint

    path = str(resolve_checkpoint(args.checkpoint))
    repeats = args.repeats or (1 if args.quick else 5)
    src, ref = read_sentences()
    if args.quick:
        src, ref = src[::5], ref[::5]
    agree = {} if args.no_agreement else agreement(path, src, ref)
    speed = app_speed(path, src, repeats)
    opus = {} if args.no_opus else opus_speed(max(repeats, 3))
    print(table(agree, speed, opus))
    print(
        json.dumps(
            {
                "checkpoint": Path(path).name,
                "sentences": len(src),
                "repeats": repeats,
                "threads": args.threads,
                "agreement": agree,
                "speed": speed,
                "opus": opus,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
