"""Where a command may write a checkpoint: ``average --out`` and ``import-marian --out`` replace a
folder as a whole (:func:`core.checkpoints.atomic_io.atomic_dir`), so they must never be pointed at
something that is not their own output: a run folder, a document folder, a parent of their inputs.
"""

from __future__ import annotations

from pathlib import Path

from core.errors import CheckpointError

#: Files a checkpoint folder may hold: what a save, ``average`` (training.json) and the OPUS-MT
#: import (SentencePiece models, vocab.json, marian_source.json) and ``adapt`` (adapted.json,
#: replay.tsv) write.
CHECKPOINT_FILE_NAMES = frozenset(
    {
        "config.json",
        "model.safetensors",
        "tokenizer_src.json",
        "tokenizer_tgt.json",
        "README.md",
        "manifest.json",
        "training.json",
        "marian_source.json",
        "vocab.json",
        "adapted.json",
        "replay.tsv",
    }
)


def is_checkpoint_folder(folder: Path) -> bool:
    """True when ``folder`` holds a checkpoint and nothing else: ``config.json`` and the weights,
    and only files a checkpoint is made of (no sub-folders, nothing a person keeps there)."""
    folder = Path(folder)
    if not ((folder / "config.json").is_file() and (folder / "model.safetensors").is_file()):
        return False
    return all(
        p.is_file() and not p.is_symlink() and (p.name in CHECKPOINT_FILE_NAMES or p.suffix == ".spm") for p in folder.iterdir()
    )


def claim_output(out: str | Path, force: bool = False, inputs: tuple[str | Path, ...] = ()) -> Path:
    """Check that a command may write its checkpoint to ``out`` and return it.

    Allowed: a new folder, an empty folder, and with ``force`` an existing checkpoint folder
    (:func:`is_checkpoint_folder`), which is replaced as a whole. Never: one of ``inputs`` or a
    folder that contains one, a file, a non-empty folder without ``force``, or with ``force`` a
    folder that holds anything else (a run folder with its saves and log, a person's files).

    Raises:
        CheckpointError: the reason, naming ``out``, and what to do instead.
    """
    out = Path(out)
    target = out.resolve()
    for p in inputs:
        src = Path(p).resolve()
        if src == target:
            raise CheckpointError(f"--out {out} is one of the input checkpoints; choose a new folder")
        if src.is_relative_to(target):
            raise CheckpointError(f"--out {out} contains the input checkpoint {p}; choose a new folder")
    if not out.exists() and not out.is_symlink():
        return out
    if out.is_symlink() or not out.is_dir():
        raise CheckpointError(f"--out {out} exists and is not a folder; choose a new folder")
    entries = sorted(p.name for p in out.iterdir())
    if not entries:
        return out
    if not force:
        raise CheckpointError(
            f"--out {out} already exists and is not empty; choose a new folder (or --force to replace the checkpoint there)"
        )
    if not is_checkpoint_folder(out):
        odd = next((n for n in entries if n not in CHECKPOINT_FILE_NAMES and not n.endswith(".spm")), entries[0])
        raise CheckpointError(
            f"--out {out} is not a checkpoint folder (it holds {odd!r}); --force replaces only a "
            "checkpoint, nothing else: choose a new folder"
        )
    return out


__all__ = ["CHECKPOINT_FILE_NAMES", "claim_output", "is_checkpoint_folder"]
