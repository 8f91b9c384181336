"""How cost grows with the input: time per token and peak memory at source = target length 16, 64, 256, 512.

``python -m bench.growth [--lengths 16 64 256 512]`` builds a random model of OPUS-MT ko-en's size (6 + 6
layers, d_model 512, 8 heads, d_ff 2048, vocabulary 65,001, ``max_len`` 512; EOS suppressed so every
output has exactly the asked length) and, for each length N, decodes N target tokens (N − 1 at 512, the
decoder's last position) from an N-token source, greedy, one thread:

- **app**: the app path, :class:`core.decoding.session.DecodeSession` stepping with every attention map
  captured, then :meth:`~core.decoding.session.DecodeSession.maps` (the dense ``[L, H, T, T]`` and
  ``[L, H, T, S]`` maps the views draw);
- **text**: the text-only path (:func:`core.decoding.text_batch.greedy_hypotheses`), no map kept.

Each (path, length) runs in a fresh process whose peak resident memory is reset once the model is
built (Linux ``clear_refs``); the table gives that peak, its growth over the process with the model
loaded (``+MB``), the time per output token (wall ms and CPU ms) and the captured maps' size. Wall times on a shared machine are
**measured under load** unless the load average printed with the table is below the CPU count.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass

import torch

VOCAB = 65001


@dataclass
class _Encoding:
    ids: list[int]
    tokens: list[str]


class _Tokenizer:
    """A stand-in tokenizer: ``encode`` ignores the text and gives ``n`` fixed ids (so the source has
    exactly ``n`` tokens + EOS); ids map to their own number as labels."""

    def __init__(self, n: int = 0) -> None:
        self.n = n

    def encode(self, text: str) -> _Encoding:
        ids = [10 + (i * 7919) % (VOCAB - 20) for i in range(self.n)]
        return _Encoding(ids, [str(i) for i in ids])

    def id_to_token(self, i: int) -> str:
        return str(i)

    def ids_to_tokens(self, ids) -> list[str]:
        return [str(int(i)) for i in ids]

    def decode(self, ids) -> str:
        return " ".join(map(str, ids))


def opus_sized_model():
    from core.transformer.config import ModelConfig
    from core.transformer.model import Transformer

    cfg = ModelConfig(
        src_vocab_size=VOCAB,
        tgt_vocab_size=VOCAB,
        d_model=512,
        n_heads=8,
        n_encoder_layers=6,
        n_decoder_layers=6,
        d_ff=2048,
        dropout=0.0,
        max_len=512,
        activation="swish",
        final_logits_bias=True,
    )
    torch.manual_seed(0)
    model = Transformer(cfg).eval()
    with torch.no_grad():
        model.final_logits_bias[cfg.eos_id] = -1e4  # never EOS: exactly the asked length
    return model


def _status_mb(field: str) -> float:
    """``VmRSS`` (resident now) or ``VmHWM`` (peak resident) of this process in MB, from /proc/self/status
    (Linux); the peak since start (``ru_maxrss``) where that file is missing."""
    try:
        for line in open("/proc/self/status"):
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _reset_peak() -> None:
    """Reset this process's peak resident size to its current one (Linux ``clear_refs`` 5), so the peak
    read later is the measured work's, not the model build's."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def run_one(path: str, length: int) -> dict:
    """One measurement in this process (see the module): ``{"wall_ms", "cpu_ms", "tokens", "peak_mb",
    "growth_mb", "maps_mb"}``."""
    from core.decoding.session import DecodeSession, prepare_source
    from core.decoding.text_batch import greedy_hypotheses

    torch.set_num_threads(1)
    model = opus_sized_model()
    c = model.config
    n_src = min(length, c.max_len) - 1  # + EOS = length source positions
    tok = _Tokenizer(n_src)
    import gc

    gc.collect()
    base = _status_mb("VmRSS")
    _reset_peak()
    w0, c0 = time.perf_counter(), time.process_time()
    maps_mb = 0.0
    if path == "app":
        s = DecodeSession(model, tok, tok, "x")
        while len(s.steps) < min(length, c.max_len - 1) and s.step() is not None:
            pass
        m = s.maps()
        n = len(s.steps)
        maps_mb = sum(t.numel() * t.element_size() for t in (m.encoder_self, m.decoder_self, m.cross)) / 1e6
    else:
        src = prepare_source("x", tok, c.max_len, c.eos_id, c.pad_id)
        n = len(greedy_hypotheses(model, [src], max_output=min(length, c.max_len - 1))[0].ids)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return {
        "wall_ms": wall / n * 1000,
        "cpu_ms": cpu / n * 1000,
        "tokens": n,
        "peak_mb": _status_mb("VmHWM"),
        "growth_mb": _status_mb("VmHWM") - base,
        "maps_mb": maps_mb,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.growth", description=__doc__.split("\n")[0])
    p.add_argument("--lengths", type=int, nargs="+", default=[16, 64, 256, 512])
    p.add_argument("--one", nargs=2, metavar=("PATH", "N"), help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.one:
        print(json.dumps(run_one(a.one[0], int(a.one[1]))))
        return 0
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"OPUS-MT-size random model, greedy, 1 thread; load average at the start {load} ({os.cpu_count()} CPUs)\n")
    print(
        "| path | source = target | tokens | wall ms/token | CPU ms/token | peak RSS MB | +MB over the loaded model | maps MB |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for n in a.lengths:
        for path in ("app", "text"):
            res = subprocess.run(
                [sys.executable, "-m", "bench.growth", "--one", path, str(n)], capture_output=True, text=True, check=True
            )
            r = json.loads(res.stdout.strip().splitlines()[-1])
            print(
                f"| {path} | {n} | {r['tokens']} | {r['wall_ms']:.1f} | {r['cpu_ms']:.1f} | {r['peak_mb']:.0f} | "
                f"{r['growth_mb']:.0f} | {r['maps_mb']:.1f} |",
                flush=True,
            )
    print(f"\nload average at the end {' / '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
