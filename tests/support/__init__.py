"""Helpers shared by the tests (the pytest fixtures that use them are in tests/conftest.py):
tiny configs and checkpoints so the suite stays fast on a CPU, and the paths of the repository."""

from __future__ import annotations

import os
from pathlib import Path

import torch

from core.defaults import DEFAULT_CHECKPOINT
from core.transformer.config import ModelConfig
from core.transformer.model import Transformer

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
ROOT = Path(__file__).resolve().parent.parent.parent
SHIPPED = DEFAULT_CHECKPOINT


def tiny_config(**kw) -> ModelConfig:
    base = dict(
        src_vocab_size=40,
        tgt_vocab_size=36,
        d_model=32,
        n_heads=4,
        n_encoder_layers=2,
        n_decoder_layers=2,
        d_ff=64,
        dropout=0.0,
        max_len=64,
    )
    base.update(kw)
    return ModelConfig(**base)


def save_tiny(path: Path, tokenizers, seed: int, **config) -> Path:
    """Save a random-weight :func:`tiny_config` model (``torch.manual_seed(seed)``, ``config``
    overrides) with ``tokenizers`` (source, target) as a checkpoint at ``path``."""
    from core.checkpoints.checkpoint import save_checkpoint

    src_tok, tgt_tok = tokenizers
    torch.manual_seed(seed)
    model = Transformer(tiny_config(src_vocab_size=src_tok.vocab_size, tgt_vocab_size=tgt_tok.vocab_size, **config)).eval()
    return save_checkpoint(path, model, src_tok, tgt_tok)


def shipped() -> Path:
    """The shipped checkpoint (tests may override with STUDIO_TEST_CHECKPOINT while developing)."""
    return Path(os.environ.get("STUDIO_TEST_CHECKPOINT", SHIPPED))
