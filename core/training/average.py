"""Checkpoint averaging (as used for the paper's base models, §6.1: the last 5 checkpoints)."""

from __future__ import annotations

import json
from pathlib import Path

from core.checkpoints.checkpoint import load_checkpoint, save_checkpoint
from core.checkpoints.output_folder import claim_output
from core.errors import CheckpointError


def _signature(tok) -> list[tuple[str, object]]:
    """What decides how a tokenizer cuts text and which piece each id is, as (part, value) pairs
    in the order they are compared: for our BPE tokenizers every section of the ``tokenizers``
    JSON (normalizer, pre-tokenizer, model with its merges, decoder, added tokens); for a
    SentencePiece side the vocabulary, the special pieces and the bytes of the ``.spm`` models."""
    if hasattr(tok, "tokenizer"):
        data = json.loads(tok.tokenizer.to_str())
        model = data.get("model") or {}
        parts = [
            ("normalizer", data.get("normalizer")),
            ("pre-tokenizer", data.get("pre_tokenizer")),
            ("added tokens", data.get("added_tokens")),
            ("decoder", data.get("decoder")),
            ("model type", model.get("type")),
            ("merges", model.get("merges")),
        ]
        parts += [(f"model {k}", v) for k, v in sorted(model.items()) if k not in ("vocab", "merges")]
        return parts
    return [
        ("special tokens", tok.special_tokens),
        ("model", tok.model_file.read_bytes()),
        ("decode model", tok.decode_model_file.read_bytes()),
    ]


def first_difference(a, b) -> str | None:
    """How tokenizers ``a`` and ``b`` first differ (``"id 7: 'x' vs 'y'"``, ``"merges differ"``,
    ``"normalizer differs"``), or None when they tokenize and label every id alike: same pieces
    for every id, and the same normalizer, pre-tokenizer, merges and decoder (two tokenizers with
    one vocabulary but other merges cut the same text into other ids)."""
    if a.vocab_size != b.vocab_size:
        return f"{a.vocab_size} vs {b.vocab_size} entries"
    for i in range(a.vocab_size):
        pa, pb = a.id_to_token(i), b.id_to_token(i)
        if pa != pb:
            return f"id {i}: {pa!r} vs {pb!r}"
    if type(a) is not type(b):
        return f"{type(a).__name__} vs {type(b).__name__}"
    for (part, va), (_, vb) in zip(_signature(a), _signature(b)):
        if va != vb:
            return f"{part} differ" if part.endswith("s") else f"{part} differs"
    return None


def average_checkpoints(paths: list[str | Path], out: str | Path, force: bool = False) -> Path:
    """Element-wise mean of the weights of checkpoints that share one config and tokenizers,
    written to ``out``: a new or empty folder, or with ``force`` an existing checkpoint folder,
    which is replaced (:func:`core.checkpoints.output_folder.claim_output`); nothing else is
    ever deleted.

    Raises:
        CheckpointError: a checkpoint cannot be loaded, its config or a tokenizer differs from the
            first one's (the first difference is named), or ``out`` may not be written (one of the
            inputs or a folder holding one, not empty without ``force``, not a checkpoint folder).
    """
    if not paths:
        raise CheckpointError("no checkpoints to average")
    claim_output(out, force, tuple(paths))
    first = load_checkpoint(paths[0], device="cpu")
    total = {k: v.clone().double() for k, v in first.model.state_dict().items()}
    for p in paths[1:]:
        ck = load_checkpoint(p, device="cpu")
        if ck.config != first.config:
            raise CheckpointError(f"{p}: config differs from {paths[0]}")
        for side in ("src_tokenizer", "tgt_tokenizer"):
            diff = first_difference(getattr(first, side), getattr(ck, side))
            if diff is not None:
                raise CheckpointError(
                    f"{p}: {side.replace('_', ' ')} differs from {paths[0]}'s ({diff}); "
                    "weights of different vocabularies cannot be averaged"
                )
        for k, v in ck.model.state_dict().items():
            total[k] += v.double()
    avg = {k: (v / len(paths)).float() for k, v in total.items()}
    first.model.load_state_dict(avg)
    card = (Path(paths[0]) / "README.md").read_text(encoding="utf-8")
    card += f"\nWeights: mean of {len(paths)} checkpoints ({', '.join(Path(p).name for p in paths)}).\n"
    return save_checkpoint(out, first.model, first.src_tokenizer, first.tgt_tokenizer, card)


__all__ = ["average_checkpoints"]
