"""Checkpoint averaging (as used for the paper's base models, §6.1: the last 5 checkpoints)."""

from __future__ import annotations

from pathlib import Path

from core.checkpoints.checkpoint import load_checkpoint, save_checkpoint
from core.errors import CheckpointError


def first_difference(a, b) -> str | None:
    """The first id whose piece differs between tokenizers ``a`` and ``b`` (``"id 7: 'x' vs 'y'"``),
    or None when both map every id to the same piece."""
    if a.vocab_size != b.vocab_size:
        return f"{a.vocab_size} vs {b.vocab_size} entries"
    for i in range(a.vocab_size):
        pa, pb = a.id_to_token(i), b.id_to_token(i)
        if pa != pb:
            return f"id {i}: {pa!r} vs {pb!r}"
    return None


def average_checkpoints(paths: list[str | Path], out: str | Path) -> Path:
    """Element-wise mean of the weights of checkpoints that share one config and tokenizers.

    Raises:
        CheckpointError: a checkpoint cannot be loaded, its config or a tokenizer differs from the
            first one's (the first differing piece is named), or ``out`` is one of the inputs.
    """
    if not paths:
        raise CheckpointError("no checkpoints to average")
    target = Path(out).resolve()
    for p in paths:
        if Path(p).resolve() == target:
            raise CheckpointError(f"--out {out} is one of the checkpoints being averaged; choose a new folder")
    first = load_checkpoint(paths[0], device="cpu")
    total = {k: v.clone().double() for k, v in first.model.state_dict().items()}
    for p in paths[1:]:
        ck = load_checkpoint(p, device="cpu")
        if ck.config != first.config:
            raise CheckpointError(f"{p}: config differs from {paths[0]}")
        for side in ("src_tokenizer", "tgt_tokenizer"):
            diff = first_difference(getattr(first, side), getattr(ck, side))
            if diff is not None:
                raise CheckpointError(f"{p}: {side.replace('_', ' ')} differs from {paths[0]}'s ({diff}); "
                                      "weights of different vocabularies cannot be averaged")
        for k, v in ck.model.state_dict().items():
            total[k] += v.double()
    avg = {k: (v / len(paths)).float() for k, v in total.items()}
    first.model.load_state_dict(avg)
    card = (Path(paths[0]) / "README.md").read_text(encoding="utf-8")
    card += f"\nWeights: mean of {len(paths)} checkpoints ({', '.join(Path(p).name for p in paths)}).\n"
    return save_checkpoint(out, first.model, first.src_tokenizer, first.tgt_tokenizer, card)


__all__ = ["average_checkpoints"]
