"""Tiny random Hugging Face Marian models with tiny SentencePiece models, built offline for the
import tests (no download). Needs the ``import`` extra (transformers, sentencepiece)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
import torch

from tests.support import FIXTURES

# In CI (.ci/run installs the extra) a missing package is a failure, never a silent skip.
REQUIRED = bool(os.environ.get("CI") or os.environ.get("REQUIRE_IMPORT_EXTRA"))


def require_import_extra():
    """Import transformers and sentencepiece, or skip with the reason (fail when REQUIRED)."""
    try:
        import sentencepiece  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as exc:
        if REQUIRED:
            raise
        pytest.skip(f'needs the import extra (pip install -e ".[import]"): {exc}')


def corpus() -> tuple[list[str], list[str]]:
    """A few hundred Korean and English fixture lines (tiny.*, lecture_sentences, copy_check)."""
    ko = (FIXTURES / "tiny.ko").read_text(encoding="utf-8").splitlines()
    en = (FIXTURES / "tiny.en").read_text(encoding="utf-8").splitlines()
    for name in ("lecture_sentences.tsv", "copy_check.tsv"):
        for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines():
            parts = line.split("\t")
            if len(parts) >= 2:
                ko.append(parts[0])
                en.append(parts[1])
    return [t for t in ko if t.strip()], [t for t in en if t.strip()]


def train_spm(lines: list[str], vocab_size: int, path: Path, coverage: float = 1.0) -> list[str]:
    """Train a unigram SentencePiece model into ``path``; returns its pieces."""
    import sentencepiece as spm

    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=buf,
        vocab_size=vocab_size,
        model_type="unigram",
        character_coverage=coverage,
        hard_vocab_limit=False,
        minloglevel=2,
        num_threads=1,
    )
    path.write_bytes(buf.getvalue())
    sp = spm.SentencePieceProcessor(model_file=str(path))
    return [sp.id_to_piece(i) for i in range(sp.get_piece_size())]


VARIANTS = {
    # name: (activation, scale_embedding, learned positions)
    "swish": ("swish", True, False),
    "learned": ("gelu", True, True),
    "relu": ("relu", False, False),
}


def _tune_eos_bias(model, tok, texts: list[str]) -> None:
    """Raise EOS's logit bias to about the smallest value at which greedy decoding of at least
    two ``texts`` ends with EOS within 12 tokens (doubling, then bisection). A random model
    rarely says EOS; the tests need outputs that end with EOS and outputs cut at the limit."""
    if not texts:
        return
    ids = [tok(t, return_tensors="pt").input_ids for t in texts]
    base = float(model.final_logits_bias[0, 0])

    def ended(extra: float) -> int:
        with torch.no_grad():
            model.final_logits_bias[0, 0] = base + extra
            outs = [model.generate(x, num_beams=1, do_sample=False, max_new_tokens=12)[0].tolist() for x in ids]
        return sum(o[-1] == 0 for o in outs)

    lo, hi = 0.0, 1.0
    while ended(hi) < 2 and hi < 256:
        lo, hi = hi, hi * 2
    for _ in range(6):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if ended(mid) >= 2 else (mid, hi)
    ended(hi)


def build_marian(folder: Path, variant: str = "swish", seed: int = 0, probe: list[str] | None = None):
    """A random MarianMTModel (d_model 16, 2+2 layers, 4 heads) and its MarianTokenizer, saved
    with ``save_pretrained`` into ``folder``. EOS's bias is raised until greedy outputs of
    ``probe`` sentences end with EOS at different lengths (see :func:`_tune_eos_bias`).
    Returns ``(model, tokenizer)`` (eval mode, eager attention).

    Weights are drawn with std 0.5 (not the 0.02 init) so attention is far from uniform; the
    pad row (the decoder start) and ``final_logits_bias`` are non-zero. For "learned" the
    position tables are random too and written into ``model.safetensors`` (Marian drops them
    on save because it normally recomputes sinusoids).
    """
    from safetensors.torch import load_file, save_file
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    act, scale, learned = VARIANTS[variant]
    folder.mkdir(parents=True, exist_ok=True)
    ko, en = corpus()
    src_pieces = train_spm(ko, 400, folder / "source.spm", coverage=0.98)  # rare Hangul -> unk
    tgt_pieces = train_spm(en, 150, folder / "target.spm")
    pieces = sorted({p for p in src_pieces + tgt_pieces if p not in ("<unk>", "<s>", "</s>")})
    pieces = [p for i, p in enumerate(pieces) if i % 17 != 5]  # some pieces the joint vocab lacks -> unk
    vocab = {"</s>": 0, "<unk>": 1}
    for p in pieces:
        vocab[p] = len(vocab)
    vocab["<pad>"] = len(vocab)
    v = len(vocab)
    import json

    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    tok = MarianTokenizer(str(folder / "source.spm"), str(folder / "target.spm"), str(folder / "vocab.json"))
    cfg = MarianConfig(
        vocab_size=v,
        d_model=16,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        activation_function=act,
        scale_embedding=scale,
        max_position_embeddings=64,
        pad_token_id=v - 1,
        decoder_start_token_id=v - 1,
        eos_token_id=0,
        forced_eos_token_id=None,
    )
    torch.manual_seed(seed)
    model = MarianMTModel(cfg)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "layer_norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.3 * torch.randn_like(p))
            elif "embed_positions" not in name:
                p.normal_(0.0, 0.5)
        model.final_logits_bias.normal_(0.0, 1.0)
        if learned:
            for side in (model.model.encoder, model.model.decoder):
                side.embed_positions.weight.normal_(0.0, 0.5)
    model.generation_config.bad_words_ids = [[v - 1]]  # as the real OPUS-MT configs: never emit pad
    model.generation_config.forced_eos_token_id = None
    _tune_eos_bias(model.eval(), tok, probe or [])
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    if learned:  # put the random tables into the file that the import reads
        state = load_file(str(folder / "model.safetensors"))
        state["model.encoder.embed_positions.weight"] = model.model.encoder.embed_positions.weight.detach().clone()
        state["model.decoder.embed_positions.weight"] = model.model.decoder.embed_positions.weight.detach().clone()
        save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})
    model.set_attn_implementation("eager")  # output_attentions needs the eager path
    return model.eval(), tok
