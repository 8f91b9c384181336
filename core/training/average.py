"""Checkpoint averaging (as used for the paper's base models, §6.1: the last 5 checkpoints)."""

from __future__ import annotations

from pathlib import Path

from core.errors import CheckpointError
from core.inference.checkpoint import load_checkpoint, save_checkpoint


def average_checkpoints(paths: list[str | Path], out: str | Path) -> Path:
    """Element-wise mean of the weights of checkpoints that share one config and tokenizers.

    Raises:
        CheckpointError: a checkpoint cannot be loaded or its config differs from the first.
    """
    if not paths:
        raise CheckpointError("no checkpoints to average")
    first = load_checkpoint(paths[0], device="cpu")
    total = {k: v.clone().double() for k, v in first.model.state_dict().items()}
    for p in paths[1:]:
        ck = load_checkpoint(p, device="cpu")
        if ck.config != first.config:
            raise CheckpointError(f"{p}: config differs from {paths[0]}")
        for k, v in ck.model.state_dict().items():
            total[k] += v.double()
    avg = {k: (v / len(paths)).float() for k, v in total.items()}
    first.model.load_state_dict(avg)
    card = (Path(paths[0]) / "README.md").read_text(encoding="utf-8")
    card += f"\nWeights: mean of {len(paths)} checkpoints ({', '.join(Path(p).name for p in paths)}).\n"
    return save_checkpoint(out, first.model, first.src_tokenizer, first.tgt_tokenizer, card)


__all__ = ["average_checkpoints"]
