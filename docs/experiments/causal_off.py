"""The causal-mask-off figure of docs/manual.md (Teacher forcing): teacher-forced loss with and without the causal mask.

Usage (from the repository root): ``python docs/experiments/causal_off.py [CHECKPOINT]``
(default ``checkpoints/ko-en-nc``). For each of the 30 pairs of ``tests/fixtures/tiny.ko`` /
``tiny.en`` it runs one teacher-forced pass (``translate(..., reference=…)``, the same pass as
``python -m core translate … --reference … [--no-causal-mask]``) with the causal mask on, then off,
and prints per setting the mean over sentences of the sentence's mean NLL (nats/token) and the
mean share of decoder self-attention that query t puts on key t + 1 (the next token; per sentence
the mean over layers, heads and queries 1..T-1, then the mean over sentences).
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.checkpoints.checkpoint import load_checkpoint  # noqa: E402
from core.decoding.translate import translate  # noqa: E402


def main(checkpoint: str) -> None:
    ck = load_checkpoint(checkpoint, device="cpu")
    fx = ROOT / "tests" / "fixtures"
    ko = (fx / "tiny.ko").read_text(encoding="utf-8").splitlines()
    en = (fx / "tiny.en").read_text(encoding="utf-8").splitlines()
    for causal in (True, False):
        losses, nexts = [], []
        for src, ref in zip(ko, en):
            r = translate(ck, src, reference=ref, causal=causal)
            d = r.maps.decoder_self  # [L, H, T, T]
            q = torch.arange(d.shape[-1] - 1)
            losses.append(r.loss)
            nexts.append(float(d[..., q, q + 1].mean()))
        print(
            f"causal mask {'on ' if causal else 'OFF'}: {len(losses)} pairs, mean NLL "
            f"{sum(losses) / len(losses):.2f} nats/token, decoder self-attention on the next token "
            f"{100 * sum(nexts) / len(nexts):.0f}%"
        )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "checkpoints" / "ko-en-nc"))
