"""Benchmarks as ratios measured side by side in one run (medians over repeats).

Prints a markdown table and, as its last line, one JSON object. ``--write-docs`` regenerates
docs/benchmarks.md. ``--quick`` keeps the whole run under a minute (fewer repeats).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
from torch import nn

from bench import checkout
from bench.timing import median_time, median_times
from core.defaults import DEFAULT_CHECKPOINT
from core.device import cpu_capability
from gui.state.view_kinds import attention_views

SHIPPED = DEFAULT_CHECKPOINT
SENTENCES = [
    "나는 학생입니다.",
    "오늘 날씨가 정말 좋네요.",
    "이 책은 누구의 것입니까?",
    "그는 매일 아침 공원에서 달린다.",
    "우리는 내일 서울에 갈 거예요.",
    "저는 커피보다 차를 더 좋아해요.",
]


def forced_tokens(model, n: int) -> list[int]:
    """n target ids that are not special tokens (the content does not change the cost)."""
    g = torch.Generator().manual_seed(0)
    return torch.randint(4, model.config.tgt_vocab_size, (n,), generator=g).tolist()


def bench_kv(ckpt, repeats: int, n: int = 40) -> dict:
    model = ckpt.model
    src = torch.tensor([ckpt.src_tokenizer.encode(SENTENCES[3]).ids + [model.config.eos_id]])
    tokens = [model.config.bos_id] + forced_tokens(model, n - 1)
    with torch.inference_mode():
        enc = model.encode(src)

    def cached(need_weights: bool):
        def run():
            with torch.inference_mode():
                cache = None
                for t in range(n):
                    out = model.decode(
                        torch.tensor([[tokens[t]]]), enc.memory, enc.src_key_padding_mask, need_weights=need_weights, cache=cache
                    )
                    cache = out.cache

        return run

    def recompute():
        with torch.inference_mode():
            for t in range(1, n + 1):
                model.decode(torch.tensor([tokens[:t]]), enc.memory, enc.src_key_padding_mask)

    t_cached, t_weights, t_full = median_times([cached(False), cached(True), recompute], repeats)  # taking turns
    return {
        "kv_speedup_40": t_full / t_cached,
        "capture_overhead": t_weights / t_cached,
        "cached_ms_per_step": t_cached / n * 1000,
        "recompute_ms_per_step": t_full / n * 1000,
    }


class TorchReference(nn.Module):
    """Same sizes as ours, built on torch.nn.Transformer (for the training-throughput ratio only)."""

    def __init__(self, c) -> None:
        super().__init__()
        self.src_embed = nn.Embedding(c.src_vocab_size, c.d_model)
        self.tgt_embed = nn.Embedding(c.tgt_vocab_size, c.d_model)
        self.pos = nn.Embedding(c.max_len, c.d_model)
        self.tf = nn.Transformer(
            c.d_model, c.n_heads, c.n_encoder_layers, c.n_decoder_layers, c.d_ff, c.dropout, batch_first=True
        )
        self.generator = nn.Linear(c.d_model, c.tgt_vocab_size, bias=False)
        self.generator.weight = self.tgt_embed.weight

    def forward(self, src, tgt):
        ps, pt = self.pos.weight[: src.size(1)], self.pos.weight[: tgt.size(1)]
        causal = torch.ones(tgt.size(1), tgt.size(1), dtype=torch.bool).triu(1)
        h = self.tf(
            self.src_embed(src) + ps,
            self.tgt_embed(tgt) + pt,
            tgt_mask=causal,
            src_key_padding_mask=src.eq(0),
            tgt_key_padding_mask=tgt.eq(0),
            memory_key_padding_mask=src.eq(0),
        )
        return self.generator(h)


def bench_train(config, repeats: int) -> dict:
    from core.training.train import loss_fn
    from core.transformer.model import Transformer

    g = torch.Generator().manual_seed(0)
    src = torch.randint(4, config.src_vocab_size, (48, 24), generator=g)
    tgt = torch.randint(4, config.tgt_vocab_size, (48, 25), generator=g)
    src[:8, -6:] = 0
    tgt[:8, -6:] = 0
    n_tokens = int(tgt[:, 1:].ne(0).sum())
    result = {}
    for name, model in (("ours", Transformer(config)), ("torch", TorchReference(config))):
        model.train()
        opt = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)

        def step(model=model, opt=opt):
            logits = model(src, tgt[:, :-1])
            loss = loss_fn(logits, tgt[:, 1:], 0, 0.1)
            opt.zero_grad()
            loss.backward()
            opt.step()

        result[name] = n_tokens / median_time(step, repeats)
    return {
        "train_vs_torch": result["ours"] / result["torch"],
        "train_tokens_per_s": result["ours"],
        "torch_train_tokens_per_s": result["torch"],
    }


def synthetic_translation(layers: int = 6, heads: int = 8, n: int = 40):
    """A Translation with random row-stochastic maps ``[L, H, n, n]`` and n steps, for redraw
    measurements and GUI stress tests (no model needed)."""
    from core.decoding.session import Source
    from core.decoding.translate import StepInfo, Translation
    from core.transformer.maps import AttentionMaps
    from core.transformer.masks import causal_mask

    g = torch.Generator().manual_seed(0)

    def rand(*shape):
        return torch.rand(*shape, generator=g).softmax(-1)

    toks = [f"t{i}" for i in range(n)]
    maps = AttentionMaps(
        rand(layers, heads, n, n),
        rand(layers, heads, n, n).tril(),
        rand(layers, heads, n, n),
        torch.zeros(n, dtype=torch.bool),
        torch.zeros(n, dtype=torch.bool),
        causal_mask(n),
        toks,
        toks,
    )
    steps = [StepInfo(t, 5, [(t, 0.6), ("x", 0.3)]) for t in toks]
    return Translation(Source("x", list(range(n)), toks, n), "x", steps, maps, "greedy")


def bench_redraw(repeats: int, layers: int = 6, heads: int = 8, n: int = 40, rounds: int = 5) -> dict:
    """Milliseconds of one step's redraw per view kind (see NOTES): ``rounds`` rounds, the three kinds
    taking turns within a round, ``2 × repeats`` single steps per kind per round. ``redraw_ms_<kind>``
    is the median of all its steps; ``redraw_ms_<kind>_quiet`` the lowest of its round medians, the
    estimate for a quiet machine (a round that something else slowed down is not the code's time)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import pyqtgraph as pg
    from PySide6 import QtWidgets

    from gui.window.main_window import MainWindow

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    pg.setConfigOptions(imageAxisOrder="row-major", background="w", foreground="k")
    result = synthetic_translation(layers, heads, n)
    win = MainWindow()
    win.resize(1600, 950)
    win.show()
    win.show_result(result, n - 1)
    kinds = tuple(v.name for v in attention_views())
    steps: dict[str, list[list[float]]] = {k: [] for k in kinds}  # kind -> per round, each step's seconds
    position = [n]

    def one_step():  # one step back or forward (alternately to step n - 1 and n), then its paint
        position[0] = 2 * n - 1 - position[0]
        win.go_to_step(position[0])
        app.processEvents()

    for _ in range(rounds):
        for kind in kinds:
            win.set_view(kind)
            app.processEvents()
            one_step()  # warm-up: the view's first step after switching
            times = []
            for _ in range(2 * repeats):
                t0 = time.perf_counter()
                one_step()
                times.append(time.perf_counter() - t0)
            steps[kind].append(times)
    win.close()
    out = {}
    for kind, per_round in steps.items():
        out[f"redraw_ms_{kind}"] = statistics.median(t for r in per_round for t in r) * 1000
        out[f"redraw_ms_{kind}_quiet"] = min(statistics.median(r) for r in per_round) * 1000
    return {"redraw_ms": sum(out[f"redraw_ms_{k}"] for k in kinds), **out}


def bench_first_translation(repeats: int, checkpoint: str) -> dict:
    """Median seconds from starting ``python -m gui.app --text … --screenshot`` to its "saved" line
    (the translation drawn and the PNG written), and to the process's exit (after Qt and torch
    tear down); ``first_translation_min_s`` is the fastest start, the estimate of the time on a quiet
    machine (slower starts are slower because something else ran, as timeit's documentation argues
    for the minimum of repeats)."""
    shown, ended = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gui.app",
                "--text",
                SENTENCES[0],
                "--screenshot",
                "/tmp/bench_first.png",
                "--checkpoint",
                checkpoint,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        )
        for line in proc.stdout:
            if line.startswith("saved "):
                shown.append(time.perf_counter() - t0)
        if proc.wait() != 0 or len(shown) < len(ended) + 1:
            raise RuntimeError("python -m gui.app --screenshot failed")
        ended.append(time.perf_counter() - t0)
    return {
        "first_translation_s": statistics.median(shown),
        "first_translation_min_s": min(shown),
        "first_translation_exit_s": statistics.median(ended),
    }


def bench_decode(ckpt, repeats: int) -> dict:
    from core.decoding.session import DecodeSession
    from core.decoding.strategy import DecodingStrategy

    c = ckpt.config
    out = {}
    for strategy in (DecodingStrategy.greedy(), DecodingStrategy.beam(4)):
        name = str(strategy).replace(" ", "")  # greedy, beam4
        counts = []

        def run(strategy=strategy, counts=counts):
            counts.clear()
            for s in SENTENCES:
                if strategy.is_greedy:
                    sess = DecodeSession(ckpt.model, ckpt.src_tokenizer, ckpt.tgt_tokenizer, s)
                    sess.run()
                    counts.append(len(sess.steps))
                else:
                    counts.append(len(strategy.search(ckpt.model, ckpt.src_tokenizer, s)[0].ids) + 1)

        t = median_time(run, repeats)
        out[f"ms_per_token_{name}"] = t / sum(counts) * 1000
    d, v = c.d_model, c.tgt_vocab_size
    per_layer = 6 * d * d + 2 * d * c.d_ff  # self q,k,v,o + cross q,o (cross K/V are cached) + FFN
    touched = c.n_decoder_layers * per_layer + d * v  # + output projection
    out["flops_per_token"] = 2 * touched
    out["achieved_gflops_greedy"] = out["flops_per_token"] / (out["ms_per_token_greedy"] / 1000) / 1e9
    a = torch.randn(1024, 1024)
    t = median_time(lambda: a @ a, 5)
    out["matmul_peak_gflops"] = 2 * 1024**3 / t / 1e9
    out["fraction_of_matmul_peak_greedy"] = out["achieved_gflops_greedy"] / out["matmul_peak_gflops"]
    return out


def machine(threads: int) -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{cpu} ({cpu_capability()} kernels), {os.cpu_count()} logical CPUs, torch {torch.__version__} "
        f"({threads} threads), Python {platform.python_version()}"
    )


GOALS = {
    "capture_overhead": ("≤ 1.25", lambda x: x <= 1.25),
    "train_vs_torch": ("≥ 0.9", lambda x: x >= 0.9),
    **{f"redraw_ms_{k}": ("< 30", lambda x: x < 30) for k in (v.name for v in attention_views())},
    "first_translation_min_s": ("< 3 (quiet machine)", lambda x: x < 3),
    "bf16_identical_fraction": ("≥ 0.95", lambda x: x >= 0.95),
    "opus_ours_app_vs_ct2_time": ("≤ 1.0", lambda x: x <= 1.0),
    "opus_ours_app_bf16_vs_ct2_time": ("≤ 1.0", lambda x: x <= 1.0),
    "int8_output_identical_fraction": ("≥ 0.95", lambda x: x >= 0.95),
    "opus_ours_app_int8_output_vs_ct2_time": ("≤ 1.0", lambda x: x <= 1.0),
    "opus_ours_plain_vs_ct2_time": ("≤ 0.8", lambda x: x <= 0.8),
    "opus_ours_plain_int8_output_vs_ct2_time": ("≤ 0.8", lambda x: x <= 0.8),
    "opus_hf_vs_ours_app_time": ("≥ 2", lambda x: x >= 2),
    "opus_hf_bf16_vs_ours_app_bf16_time": ("≥ 2", lambda x: x >= 2),
}


def bench_agreement(checkpoint: str) -> dict:
    """bf16 and int8-output against fp32 on the app path: sentences with identical output ids, out of the 207 of
    bench/precision.py (the Korean column of three held-out fixture files)."""
    from bench.precision import agreement, read_sentences

    src, ref = read_sentences()
    both = agreement(checkpoint, src, ref, precisions=("fp32", "bf16", "int8-output"))
    out = {}
    for precision, key in (("bf16", "bf16"), ("int8-output", "int8_output")):
        a = both[precision]
        out.update(
            {
                f"{key}_identical": f"{a['identical']}/{a['sentences']}",
                f"{key}_identical_fraction": a["identical"] / a["sentences"],
                f"{key}_chrf_diff": a["chrf_diff"],
                f"{key}_attn_max_abs": a["attn_max_abs"],
            }
        )
    return out


def table(results: dict) -> str:
    lines = ["| metric | value | goal | met |", "|---|---|---|---|"]
    for k, v in results.items():
        goal, ok = GOALS.get(k, ("", None))
        val = f"{v:.3g}" if isinstance(v, float) else str(v)
        lines.append(f"| `{k}` | {val} | {goal} | {'' if ok is None else ('yes' if ok(v) else 'NO')} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    p.add_argument("--quick", action="store_true", help="fewer repeats: under a minute")
    p.add_argument("--checkpoint", default=str(SHIPPED))
    p.add_argument("--write-docs", action="store_true", help="regenerate docs/benchmarks.md")
    p.add_argument("--no-opus", action="store_true", help="skip the OPUS-MT-size import/CTranslate2 benchmark")
    p.add_argument("--no-agreement", action="store_true", help="skip the bf16/int8-output-vs-fp32 agreement (207 sentences)")
    p.add_argument(
        "--src",
        help="a file of Korean sentences (e.g. FLORES devtest .ko): also run bench.batch_speed on it and bench.growth, "
        "and put their tables in the docs",
    )
    args = p.parse_args(argv)
    from core.checkpoints.checkpoint import load_checkpoint

    reps = 3 if args.quick else 9
    threads = torch.get_num_threads()  # read first: CTranslate2 sets the OpenMP pool to its own count
    ckpt = load_checkpoint(args.checkpoint, device="cpu")
    results: dict = {}
    results.update(bench_kv(ckpt, reps))
    results.update(bench_train(ckpt.config, reps))
    results.update(bench_redraw(reps))
    results.update(bench_first_translation(1 if args.quick else 5, args.checkpoint))
    results.update(bench_decode(ckpt, 1 if args.quick else 3))
    if not args.no_agreement:
        results.update(bench_agreement(args.checkpoint))
    profile: list[str] = []
    if not args.no_opus:
        from bench.opus_size import bench_opus_size

        results.update(bench_opus_size(1 if args.quick else 7, profile=args.write_docs))
        profile = results.pop("opus_profile", [])
    results = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in results.items()}
    md = table(results)
    print(md)
    scale = file_scale(args.src, args.checkpoint, args.quick) if args.src else ""
    if args.write_docs:
        doc = checkout() / "docs" / "benchmarks.md"
        doc.parent.mkdir(exist_ok=True)
        doc.write_text(
            "# Benchmarks\n\nGenerated by `python -m bench --write-docs"
            + (" --quick" if args.quick else "")
            + "` (do not edit by hand).\n\n"
            f"Machine: {machine(threads)}.\nCheckpoint: `{Path(args.checkpoint).name}`. Medians over {reps} repeats "
            "(redraw: 5 rounds; the `opus_*` engines: 7 interleaved rounds); "
            "ratios measured side by side in the same run.\n\n"
            + md
            + "\n\n"
            + NOTES
            + ("\n## Profile\n\n" + "\n".join(profile) + "\n" + PROFILE_NOTE if profile else "")
            + scale,
            encoding="utf-8",
        )
    print(json.dumps(results))
    return 0


NOTES = """Threads: every metric runs with torch's default thread count above except the `opus_*` rows and the
agreement, which use one thread for every engine (the machine is shared).

Definitions:
- `kv_speedup_40`: time to produce 40 decoder positions by re-running the whole prefix each step, divided
  by the time with the key/value cache (one new position per step); weights not captured in either. It has
  no goal: on a model this small the per-step overhead, not the prefix, dominates.
- `capture_overhead`: cached decoding with attention weights returned (explicit softmax path) / without (SDPA).
- `train_vs_torch`: our forward+backward+Adam tokens/s / the same sizes built on `torch.nn.Transformer`,
  same padded batch (48 × 24 source, 48 × 24 target), dropout as configured.
- `redraw_ms_<kind>`: one step's redraw of one view kind (the 6 × 8 grid plus the enlarged map and the
  mask panel) at S = T = 40, offscreen, synthetic maps (no model): the slider moved by one step (alternately
  to step 39 and 40) and the paint that follows, median of single steps over five rounds (the three kinds
  take turns within a round); `redraw_ms` is the sum of the three. `redraw_ms_<kind>_quiet`, for
  information, is the lowest of the five round medians (on this shared VM two runs of the same code a
  minute apart gave 29.7 and 41.0 ms for the decoder; rounds a few seconds apart see less of that swing).
  `python -m bench.redraw_count` counts the instructions of the same steps under valgrind's callgrind
  instead (needs valgrind): a measure of the redraw's work that such swings do not move (repeats within 0.1%).
- `first_translation_s`: from starting `python -m gui.app --text … --screenshot` to its "saved" line: process
  start, imports, window, model load, translation, render and PNG written (the first translation on screen),
  median of 5 starts; `first_translation_min_s`: the fastest of them, the goal's "quiet machine" (this machine
  is shared: the same code's median moved between 2.5 and 3.5 s within one hour);
  `first_translation_exit_s`: to the process's exit (plus Qt's and torch's tear-down).
- `flops_per_token`: 2 × parameters touched per decoder step (decoder layers + output projection);
  `achieved_gflops_greedy` divides it by the measured greedy ms/token; `matmul_peak_gflops` is a
  1024 × 1024 float32 matmul on the same machine, the practical ceiling.
- `bf16_*`, `int8_output_*` (bench/precision.py's agreement): the checkpoint above decoded greedily on the
  app path at fp32, at bf16 and at int8-output (fp32 layers, int8 output projection with its 8 best
  candidates scored again in fp32) on 207 held-out sentences; `*_identical`: outputs with the same ids;
  `*_chrf_diff`: chrF minus fp32's; `*_attn_max_abs`: the largest attention difference when forced
  through fp32's tokens. `python -m bench.precision` gives int8 too. What int8-output costs: the
  probabilities of candidates outside the 8 best come from the int8 product, and the model holds an int8
  copy of the projection (V × d_model bytes: 33 MB at OPUS-MT size) beside the float32 one.
- `opus_*` (bench/opus_size.py): a random model of OPUS-MT ko-en's size (6 + 6 layers, d_model 512, 8 heads,
  d_ff 2048, vocabulary 65,001, swish) built with transformers, imported with `import-marian`, and the
  same weights converted by CTranslate2's TransformersConverter; one CPU thread each, EOS suppressed so
  every engine decodes `opus_tokens` tokens of one sentence greedily. Every engine runs once per round, in
  turns (each round starting one engine later), for 7 rounds; `opus_ms_per_token_*` is an engine's median,
  and each `*_vs_ct2_time` and `opus_hf_vs_*` ratio is the median of the ratios within a round (two times
  taken a few seconds apart, on the same state of the shared machine; timed in separate blocks instead,
  the same code's fp32 app ÷ CTranslate2 read 0.89 to 1.09 between runs); the `*_floor_*` ratios divide
  medians. `ours_app` is the app's path
  (every attention weight captured at every step) at fp32, `ours_app_bf16` / `ours_app_int8` /
  `ours_app_int8_output` the same at those precisions, `ours_plain` batched greedy without weights
  (`ours_plain_int8_output` the same at int8-output; `opus_plain_int8_output_same_output`: its tokens equal
  fp32's);
  `*_vs_ct2_time` is our time per token / CTranslate2 float32's (above 1 = we are slower). `hf_generate`:
  Hugging Face `generate` on the same weights with `output_attentions=True` (eager attention), the path bertviz and inseq use;
  `opus_hf_vs_ours_app_time` is its time / our fp32 app path's (above 1 = we are faster); `*_bf16`: both
  with bfloat16 weights (Hugging Face's model cast to bfloat16, ours at `--precision bf16`);
  `opus_hf_vs_ours_app_int8_output_time` (no goal: not the same precision): Hugging Face at fp32 / our app
  path at int8-output, which draws the same tokens and the same attention weights as fp32
  (`opus_app_int8_output_same_output`, `opus_app_int8_output_attn_max_abs`: the largest difference of any
  self- or cross-attention weight of any step between the two app paths, when the tokens are the same),
  while its probabilities outside the 8 best candidates come from the int8 product.
  `*_same_output`: identical token sequences to ours. `opus_load_s`: `load_checkpoint` of the imported
  ~310 MB checkpoint.
- The memory floor: `opus_step_weight_mb` is the fp32 weights one cached decoder step reads (decoder layers
  without the cross-attention key/value projections, the output projection, its bias);
  `mem_read_gb_s_1thread` the best read bandwidth of one thread (a 256 MB sum or a 65,001 × 512 matrix-vector
  product; the better of a measurement before and one after the engines');
  `opus_floor_ms_per_token` their quotient, the time a step needs just to read its weights once.
  No fp32 engine on this machine steps faster than the floor, so `opus_floor_vs_ct2_time` is the lowest
  reachable fp32 `*_vs_ct2_time`, and `opus_hf_vs_floor_time` the highest reachable fp32
  `opus_hf_vs_ours_app_time`.
"""


def file_scale(src: str, checkpoint: str, quick: bool) -> str:
    """The file-scale sections of the docs: ``python -m bench.batch_speed --src SRC`` (the shipped model
    on the file through the text-only batches; ours vs CTranslate2 at the same batch size and at the
    same precision on the OPUS-size model) and ``python -m bench.growth`` (time and memory as inputs
    grow), each run in its own process and printed as it ran, under a heading with its command."""
    sections = []
    root = checkout()
    if Path(checkpoint).resolve().is_relative_to(root):  # shown (and passed) relative to the checkout
        checkpoint = str(Path(checkpoint).resolve().relative_to(root))
    for title, args in (
        (
            "File-scale batches and CTranslate2 at the same precision",
            ["bench.batch_speed", "--src", src, "--checkpoint", checkpoint]
            + (["--repeats", "1", "--limit", "64"] if quick else []),
        ),
        ("Cost as inputs grow", ["bench.growth"] + (["--lengths", "16", "64"] if quick else [])),
    ):
        shown = "python -m " + " ".join(Path(a).name if a == src else a for a in args)
        print(f"\n{shown}", flush=True)
        out = subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, check=True, cwd=checkout()).stdout
        print(out, flush=True)
        sections.append(f"\n## {title}\n\n`{shown}` (run by `python -m bench --write-docs --src …`):\n\n{out.strip()}\n")
    return "".join(sections) + SCALE_NOTE


SCALE_NOTE = """
How to read the file-scale sections: `sentences/s` counts whole sentences; `CPU s` is this process's CPU
time (on a busy machine OpenMP threads spin while the other core is busy, so one thread can be the faster
there). Ours ÷ CTranslate2 throughput above 1 means we translate more sentences per second; in the
same-precision table ours ÷ CTranslate2 is a ratio of times per token (below 1 = we are faster). A
CTranslate2 compute type its CPU build does not offer is printed as skipped: then there is no like-for-like
row for that precision on that machine. Growth: the app path keeps every attention map (`[L, H, T, T]` and
`[L, H, T, S]` per kind), so its memory grows as N² with the length; the text-only path keeps none.
"""

PROFILE_NOTE = """
How to read it: `linear` is every matrix product of the decoder and the output projection over 65,001
pieces (weights read from memory once per step: at batch 1 a step is bound by memory bandwidth, which is
why int8 weights step faster, and bf16 weights too where the CPU multiplies bf16 in hardware: the machine
line says `+BF16`; without it PyTorch emulates bf16 and it is slower than fp32); the rest is per-step
Python and the attention of one query.
Rerun with `python -m bench --write-docs` (or `python -m bench.precision --profile fp32` for more rows).
"""


if __name__ == "__main__":
    sys.exit(main())
