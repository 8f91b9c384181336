"""File-scale and like-for-like speed: text-only batches and CTranslate2 at the same compute type.

``python -m bench.batch_speed --src FILE`` prints, with the CPU flags found:

1. **Shipped model, a file of sentences** (e.g. FLORES devtest): greedy and beam 4 through the text-only
   batched path (:func:`core.decoding.text_batch.translate_texts`, what ``evaluate`` and ``translate -``
   run): wall seconds, CPU seconds of this process, sentences/s (``--threads`` torch threads).
2. **Ours vs CTranslate2 at the same batch size** on the OPUS-MT-size random model of
   :mod:`bench.opus_size` (EOS suppressed in both, every output capped at ``--max-output`` tokens, so
   both decode exactly the same number of tokens): sentences/s of each, greedy and beam 4, and how
   many outputs differ in any token. One thread each; the engines take turns round by round.
3. **Same precision, one sentence** on the same model: ours (app path with every map, and text only)
   at fp32, int8 and bf16 beside CTranslate2 at float32, int8, int8_float32, int8_bfloat16 and bfloat16
   (a compute type CTranslate2 does not support on this CPU is printed as skipped), ms per token,
   the ratio ours ÷ CTranslate2, and whether the tokens are identical.

The sentences are read from ``--src`` (a path given on the command line; the benchmark never reads
a corpus by itself). Timings on a shared machine vary: each row is the median of ``--repeats`` rounds.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch

from bench.timing import round_times

CPU_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_int8", "avx_vnni", "fma")
#: our precision -> the CTranslate2 compute types that do the same arithmetic (weights, products)
SAME_PRECISION = {
    "fp32": ("float32",),
    "int8": ("int8", "int8_float32"),
    "bf16": ("bfloat16", "int8_bfloat16"),
}
TEXT = "그는 매일 아침 공원에서 달린다."


def cpu_flags() -> list[str]:
    """The SIMD flags of :data:`CPU_FLAGS` this CPU reports in /proc/cpuinfo ([] where it cannot be read)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    flags = set()
    for line in text.splitlines():
        if line.startswith("flags"):
            flags |= set(line.split(":", 1)[1].split())
    return [f for f in CPU_FLAGS if f in flags]


def _timed(fn) -> tuple[float, float, object]:
    """``(wall s, CPU s of this process, result)`` of one call."""
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w0, time.process_time() - c0, out


def cpu_rounds(fns, repeats: int) -> list[tuple[list[float], list[float]]]:
    """Per function, ``(wall s, CPU s)`` of each of ``repeats`` rounds, the functions taking turns (one
    warm-up call each first). CPU seconds count this process's threads: with one thread per engine they
    are the work done, less sensitive than wall time to other programs on a shared machine."""
    for fn in fns:
        fn()
    out: list[tuple[list[float], list[float]]] = [([], []) for _ in fns]
    for r in range(repeats):
        for i in [(r + j) % len(fns) for j in range(len(fns))]:
            wall, cpu, _ = _timed(fns[i])
            out[i][0].append(wall)
            out[i][1].append(cpu)
    return out


def shipped_file(checkpoint: str, lines: list[str], batch_size: int, beams=(1, 4)) -> list[str]:
    """Markdown rows: the text-only path on ``lines`` at each beam size (one run each)."""
    from core.checkpoints.checkpoint import load_checkpoint
    from core.decoding.text_batch import translate_texts

    ck = load_checkpoint(checkpoint, device="cpu")
    rows = []
    for k in beams:
        wall, cpu, res = _timed(lambda k=k: translate_texts(ck, lines, k, batch_size=batch_size))
        tokens = sum(r.n_tokens for r in res)
        rows.append(
            f"| {'greedy' if k == 1 else f'beam {k}'} | {len(lines)} | {batch_size} | {wall:.1f} | {cpu:.1f} | "
            f"{len(lines) / wall:.1f} | {tokens / wall:.0f} |"
        )
    return rows


def _ct2_translator(folder: Path, compute_type: str):
    import ctranslate2

    return ctranslate2.Translator(str(folder), device="cpu", inter_threads=1, intra_threads=1, compute_type=compute_type)


def opus_rows(lines: list[str], batch_size: int, max_output: int, repeats: int, beams=(1, 4)) -> tuple[list[str], list[str]]:
    """``(batch rows, precision rows)``, markdown, on the OPUS-MT-size random model (see the module)."""
    import ctranslate2
    from ctranslate2.converters import TransformersConverter

    from bench.opus_size import build_hf
    from core.checkpoints.checkpoint import load_checkpoint
    from core.checkpoints.marian import import_marian
    from core.decoding.session import DecodeSession, prepare_source
    from core.decoding.text_batch import greedy_hypotheses, translate_texts

    supported = ctranslate2.get_supported_compute_types("cpu")
    batch_rows, prec_rows = [], []
    with tempfile.TemporaryDirectory(prefix="batch-bench-") as tmp:
        tmp = Path(tmp)
        build_hf(tmp / "hf")
        import_marian(str(tmp / "hf"), tmp / "ours", log=lambda m: None)
        TransformersConverter(str(tmp / "hf")).convert(str(tmp / "ct2"), force=True)
        ck = load_checkpoint(tmp / "ours", device="cpu")
        c = ck.model.config
        pieces_in = ck.src_tokenizer.pieces
        sources = [prepare_source(t, ck.src_tokenizer, c.max_len, c.eos_id, c.pad_id) for t in lines if t.strip()]
        texts = [s.text for s in sources]
        ct2_src = [[pieces_in[i] for i in s.ids[:-1]] + ["</s>"] for s in sources]
        tgt = ck.tgt_tokenizer.pieces
        tr = _ct2_translator(tmp / "ct2", "float32")
        for k in beams:

            def ours(k=k):
                return translate_texts(ck, texts, k, batch_size=batch_size, max_output=max_output)

            def theirs(k=k):
                return tr.translate_batch(ct2_src, max_batch_size=batch_size, beam_size=k, max_decoding_length=max_output)

            ours_ids = [[tgt[i] for i in r.ids] for r in ours()]
            their_ids = [r.hypotheses[0] for r in theirs()]
            differ = sum(a != b for a, b in zip(ours_ids, their_ids))
            n_tok = sum(map(len, ours_ids)), sum(map(len, their_ids))
            (t_ours, c_ours), (t_theirs, c_theirs) = cpu_rounds([ours, theirs], repeats)
            ratio = statistics.median(b / a for a, b in zip(t_ours, t_theirs))  # ours' throughput ÷ theirs, per round
            ratio_cpu = statistics.median(b / a for a, b in zip(c_ours, c_theirs))
            batch_rows.append(
                f"| {'greedy' if k == 1 else f'beam {k}'} | {len(texts)} | {batch_size} | {n_tok[0]} / {n_tok[1]} | "
                f"{len(texts) / statistics.median(t_ours):.2f} | {len(texts) / statistics.median(t_theirs):.2f} | "
                f"{ratio:.2f} | {statistics.median(c_ours):.2f} / {statistics.median(c_theirs):.2f} | "
                f"{ratio_cpu:.2f} | {differ} |"
            )
        # same precision, one sentence
        src = prepare_source(TEXT, ck.src_tokenizer, c.max_len, c.eos_id, c.pad_id)
        one = [[pieces_in[i] for i in src.ids[:-1]] + ["</s>"]]
        for ours_p, types in SAME_PRECISION.items():
            cp = ck if ours_p == "fp32" else load_checkpoint(tmp / "ours", device="cpu", precision=ours_p)

            def app(cp=cp):
                s = DecodeSession(cp.model, cp.src_tokenizer, cp.tgt_tokenizer, TEXT)
                for _ in range(max_output):
                    s.step()
                return s.output_ids

            def plain(cp=cp):
                return greedy_hypotheses(cp.model, [src], max_output=max_output)[0].ids

            ref_ids = [tgt[i] for i in plain()]
            engines, names = [app, plain], ["app", "plain"]
            for ct in types:
                if ct not in supported:
                    prec_rows.append(f"| {ours_p} | {ct} | – | – | – | – | not supported by CTranslate2 on this CPU |")
                    continue
                t = _ct2_translator(tmp / "ct2", ct)
                engines.append(lambda t=t: t.translate_batch(one, beam_size=1, max_decoding_length=max_output))
                names.append(ct)
            results = [fn() for fn in engines]
            times = round_times(engines, repeats)
            ms = {n: statistics.median(ts) / max_output * 1000 for n, ts in zip(names, times)}
            for j, ct in enumerate(names[2:], start=2):
                hyp = results[j][0].hypotheses[0]
                same = "identical" if hyp == ref_ids else f"{sum(a != b for a, b in zip(hyp, ref_ids))} of {len(ref_ids)} differ"
                r_app = statistics.median(a / b for a, b in zip(times[0], times[j]))
                r_plain = statistics.median(a / b for a, b in zip(times[1], times[j]))
                prec_rows.append(
                    f"| {ours_p} | {ct} | {ms['app']:.2f} | {ms['plain']:.2f} | {ms[ct]:.2f} | "
                    f"{r_app:.2f} / {r_plain:.2f} | {same} |"
                )
    return batch_rows, prec_rows


def machine_line() -> str:
    """CPU model, logical CPUs, SIMD flags, torch and CTranslate2 versions, and the load average now."""
    import os
    import platform

    cpu = platform.machine()
    try:
        cpu = next(
            ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines() if ln.startswith("model name")
        )
    except (OSError, StopIteration):
        pass
    try:
        import ctranslate2

        types = ", ".join(sorted(ctranslate2.get_supported_compute_types("cpu")))
        ct2 = f", CTranslate2 {ctranslate2.__version__} (CPU compute types: {types})"
    except ImportError:
        ct2 = ", CTranslate2 not installed"
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{cpu}, {os.cpu_count()} logical CPUs, flags {' '.join(cpu_flags()) or 'none found'}; torch {torch.__version__}{ct2}; "
        f"load average {load} (1 / 5 / 15 min)"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.batch_speed", description=__doc__.split("\n")[0])
    p.add_argument("--src", required=True, help="source sentences, one per line (e.g. FLORES devtest .ko)")
    p.add_argument("--checkpoint", default="checkpoints/ko-en-nc")
    p.add_argument("--limit", type=int, default=None, help="first N lines for the shipped model (default all)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--threads", type=int, default=2, help="torch threads for the shipped-model rows")
    p.add_argument("--opus-limit", type=int, default=32, help="lines for the OPUS-size comparison (0: skip it)")
    p.add_argument("--max-output", type=int, default=24, help="OPUS-size rows: tokens decoded per sentence")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--no-shipped", action="store_true", help="skip the shipped-model rows")
    p.add_argument("--write-docs", action="store_true", help="write the tables to docs/benchmarks-batch.md")
    a = p.parse_args(argv)
    lines = Path(a.src).read_text(encoding="utf-8").split("\n")
    lines = [ln for ln in lines if ln.strip()]
    out = [f"Machine at the start: {machine_line()}."]
    say = lambda text: (out.append(text), print(text, flush=True))  # noqa: E731
    print(out[0])
    if not a.no_shipped:
        torch.set_num_threads(a.threads)
        shipped = lines[: a.limit] if a.limit else lines
        say(
            f"\nShipped model `{a.checkpoint}` on {len(shipped)} lines of `{Path(a.src).name}`, text only, {a.threads} threads:\n"
        )
        say("| decoding | sentences | batch | wall s | CPU s | sentences/s | tokens/s |\n|---|---|---|---|---|---|---|")
        say("\n".join(shipped_file(a.checkpoint, shipped, a.batch_size)))
    if a.opus_limit:
        try:
            import ctranslate2  # noqa: F401
            import transformers  # noqa: F401
        except ImportError as exc:
            say(f"\nOPUS-size comparison skipped: needs ctranslate2 and the import extra ({exc})")
            return 0
        torch.set_num_threads(1)
        batch, prec = opus_rows(lines[: a.opus_limit], a.batch_size, a.max_output, a.repeats)
        torch.set_num_threads(1)
        say(
            f"\nOPUS-MT-size random model, the first {a.opus_limit} lines of `{Path(a.src).name}`, "
            f"{a.max_output} tokens per sentence, 1 thread each, medians of {a.repeats} rounds:\n"
        )
        say(
            "| decoding | sentences | batch | tokens ours / CT2 | ours sent/s | CT2 sent/s | ours ÷ CT2 throughput (wall) "
            "| CPU s ours / CT2 | ours ÷ CT2 throughput (CPU) | outputs differing |"
        )
        say("|---|---|---|---|---|---|---|---|---|---|")
        say("\n".join(batch))
        say(f"\nSame precision, one sentence, {a.max_output} tokens, greedy, 1 thread each:\n")
        say("| ours | CTranslate2 | ours app ms/tok | ours plain ms/tok | CT2 ms/tok | ours ÷ CT2 (app / plain) | tokens |")
        say("|---|---|---|---|---|---|---|")
        say("\n".join(prec))
    say(f"\nMachine at the end: {machine_line()}.")
    if a.write_docs:
        from bench import checkout

        cmd = "python -m bench.batch_speed " + " ".join(argv if argv is not None else __import__("sys").argv[1:])
        (checkout() / "docs" / "benchmarks-batch.md").write_text(
            "# Benchmarks: file-scale batches and CTranslate2 at the same precision\n\n"
            f"Generated by `{cmd}` (do not edit by hand). A load average above the CPU count means the machine was "
            "shared while it ran: wall times are then **measured under load**; the CPU-second columns are less affected.\n\n"
            + "\n".join(out)
            + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
