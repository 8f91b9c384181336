"""The run's BPE tokenizers (``OUT/tokenizer_src.json``, ``OUT/tokenizer_tgt.json``)."""

from __future__ import annotations

from pathlib import Path

from core.checkpoints.atomic_io import write_text_atomic
from core.tokenizers.bpe import TextTokenizer
from core.training.distributed import DistContext


def run_tokenizers(opts, out: Path, train_pairs: list[tuple[str, str]], ctx: DistContext) -> tuple[TextTokenizer, TextTokenizer]:
    """Source and target tokenizers of the run in ``out`` (trained once, then loaded).

    Under torchrun rank 0 trains and saves them and every rank then loads the same files.

    Raises:
        ValueError: a rank cannot see the files rank 0 wrote (multi-node without a shared ``out``).
    """
    if ctx.distributed:
        if ctx.is_main:
            _tokenizers(opts, out, train_pairs)
        ctx.barrier()
        if not (out / "tokenizer_tgt.json").exists():
            raise ValueError(
                f"rank {ctx.rank} cannot see {out}/tokenizer_*.json written by rank 0: "
                "a multi-node run needs --out on a filesystem every node shares"
            )
    return _tokenizers(opts, out, train_pairs)


def _tokenizers(opts, out: Path, train_pairs: list[tuple[str, str]]) -> tuple[TextTokenizer, TextTokenizer]:
    """The run's tokenizers: loaded from ``out`` when it has both (resume), else trained on the
    distinct training pairs and saved (again, when a run was stopped between writing the two files:
    nothing was trained with them yet). A joint vocabulary is one tokenizer saved as both files."""
    if (out / "tokenizer_src.json").exists() and (out / "tokenizer_tgt.json").exists():
        return TextTokenizer.from_file(out / "tokenizer_src.json"), TextTokenizer.from_file(out / "tokenizer_tgt.json")
    uniq = list(dict.fromkeys(train_pairs))
    if opts.joint_vocab:
        src_tok = tgt_tok = TextTokenizer.train((x for pair in uniq for x in pair), opts.joint_vocab)
    else:
        src_tok = TextTokenizer.train((s for s, _ in uniq), opts.src_vocab)
        tgt_tok = TextTokenizer.train((t for _, t in uniq), opts.tgt_vocab)
    for tok, name in ((src_tok, "tokenizer_src.json"), (tgt_tok, "tokenizer_tgt.json")):
        write_text_atomic(out / name, tok.tokenizer.to_str())  # a crash never leaves a half tokenizer
    return src_tok, tgt_tok
