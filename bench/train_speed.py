"""Training throughput, fp32 vs bf16 autocast (``--precision bf16`` of ``python -m core train``).

Times full training steps (forward, fp32 loss, backward, Adam) of a model of the size we train
(d_model 256, 4 heads, 4+4 layers, d_ff 1024, 8k joint vocabulary) on random length-bucketed
batches of about 3,000 padded tokens, alternating fp32 and bf16 so both see the same machine
load. Prints target tokens/s per precision and the bf16 / fp32 ratio.

    python -m bench.train_speed [--steps 6] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch

from core.training.train import loss_fn
from core.transformer.config import ModelConfig
from core.transformer.model import Transformer


def train_step(model, opt, src, tgt, bf16: bool) -> None:
    """One optimizer step; ``src [B, S]``, ``tgt [B, T+1]``."""
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        logits = model(src, tgt[:, :-1])
    loss = loss_fn(logits, tgt[:, 1:], model.config.pad_id, 0.1)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()


def measure(steps: int = 6, threads: int = 2, batch: int = 100, length: int = 30) -> dict:
    """tokens/s (target tokens per second of training) for fp32 and bf16, medians over ``steps``."""
    torch.set_num_threads(threads)
    cfg = ModelConfig(
        src_vocab_size=8000,
        tgt_vocab_size=8000,
        d_model=256,
        n_heads=4,
        n_encoder_layers=4,
        n_decoder_layers=4,
        d_ff=1024,
        dropout=0.1,
        share_src_tgt_embed=True,
        norm_first=True,
    )
    torch.manual_seed(0)
    model = Transformer(cfg).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    g = torch.Generator().manual_seed(1)
    src = torch.randint(4, 8000, (batch, length), generator=g)
    tgt = torch.randint(4, 8000, (batch, length + 1), generator=g)
    n_tok = batch * length
    times = {"fp32": [], "bf16": []}
    for p in ("fp32", "bf16"):  # warm-up
        train_step(model, opt, src, tgt, p == "bf16")
    for _ in range(steps):
        for p in ("fp32", "bf16"):
            t0 = time.perf_counter()
            train_step(model, opt, src, tgt, p == "bf16")
            times[p].append(time.perf_counter() - t0)
    rate = {p: n_tok / statistics.median(t) for p, t in times.items()}
    return {
        "threads": threads,
        "batch_tokens": n_tok,
        "fp32_tok_s": round(rate["fp32"]),
        "bf16_tok_s": round(rate["bf16"]),
        "bf16_over_fp32": round(rate["bf16"] / rate["fp32"], 2),
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args(argv)
    r = measure(a.steps, a.threads)
    print(
        f"training tokens/s: fp32 {r['fp32_tok_s']}, bf16 {r['bf16_tok_s']}, bf16/fp32 {r['bf16_over_fp32']}x "
        f"({r['threads']} threads, {r['batch_tokens']}-token batches)"
    )
    print(json.dumps(r))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
