"""App-path greedy decoding speed of one or more checkpoints, side by side.

``python docs/experiments/step_speed.py CK [CK ...]`` loads each checkpoint (fp32, CPU), decodes three
Korean sentences with :class:`core.decoding.session.DecodeSession` (every attention weight captured,
as in the app) on one thread, seven passes with the checkpoints interleaved so a change in the
machine's load hits all alike, and prints the median milliseconds per generated token (the encoder's
once-per-sentence cost is spread over the sentence's tokens). Stop training runs first: the numbers
are only comparable within one run.
"""

from __future__ import annotations

import statistics
import sys
import time

import torch

from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.session import DecodeSession

TEXTS = ["트랜스포머는 인코더와 디코더로 이루어져 있습니다.", "비가 와서 우리는 집에 있었다.", "오후 3시 30분에 회의가 있어요."]


def ms_per_token(ck) -> float:
    """One pass over :data:`TEXTS`: wall milliseconds per generated token."""
    t0, n = time.perf_counter(), 0
    for text in TEXTS:
        session = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, text)
        session.run()
        n += len(session.steps)
    return (time.perf_counter() - t0) * 1000 / n


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    torch.set_num_threads(1)
    cks = {p: load_checkpoint(p, device="cpu") for p in argv}
    for ck in cks.values():
        ms_per_token(ck)  # warm-up
    times: dict[str, list[float]] = {p: [] for p in cks}
    for _ in range(7):
        for p, ck in cks.items():
            times[p].append(ms_per_token(ck))
    for p, ck in cks.items():
        c = ck.config
        print(
            f"{p}: {c.n_encoder_layers} + {c.n_decoder_layers} layers, d_model {c.d_model}, "
            f"{ck.model.num_parameters() / 1e6:.2f}M parameters: {statistics.median(times[p]):.2f} ms/token"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
