"""Import a Hugging Face Marian model (OPUS-MT, e.g. ``Helsinki-NLP/opus-mt-ko-en``) into our own
:class:`core.transformer.model.Transformer`: ``python -m core import-marian SOURCE --out DIR``.

Marian's architecture is expressed as :class:`ModelConfig` options (no model fork): post-LN,
embeddings scaled by √d_model (``scale_embedding``), sinusoidal positions with the sines in the
first half of the features (``positional="sinusoidal_halves"``) or a stored table
(``"learned"``), swish/relu/gelu FFN (``activation``), ``final_logits_bias``, one shared
source/target embedding tied to the output projection, decoding started from pad
(``decoder_start_id = bos_id = pad_id``), pad never emitted (``never_output_pad``).

Reads ``config.json``, ``model.safetensors`` (or ``pytorch_model.bin`` through
``torch.load(weights_only=True)``, which refuses pickled code), ``source.spm``, ``target.spm``
and ``vocab.json``. Needs neither ``transformers`` nor a network connection for a local folder;
a hub id is fetched with ``huggingface_hub``. The output folder is written under a temporary
name and renamed at the end, so a failure never leaves a partial checkpoint.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import torch

from core.checkpoints.atomic_io import atomic_dir, sweep_stale
from core.checkpoints.checkpoint import load_checkpoint, write_checkpoint_files
from core.checkpoints.marian_weights import convert_state_dict, read_marian_weights
from core.checkpoints.output_folder import claim_output
from core.errors import CheckpointError
from core.textio import read_json
from core.tokenizers.spm import SentencePieceTokenizer
from core.transformer.config import ACTIVATIONS, ModelConfig, check_fits_memory
from core.transformer.layers import sinusoid_table
from core.transformer.model import Transformer

HUB_FILES = [
    "config.json",
    "generation_config.json",
    "model.safetensors",
    "pytorch_model.bin",
    "source.spm",
    "target.spm",
    "vocab.json",
    "tokenizer_config.json",
    "README.md",
]
LICENCE = "CC-BY 4.0 (OPUS-MT models by Helsinki-NLP; attribution required)"


class MarianImportError(CheckpointError):
    """The source is not a Marian model we can import (message names the file and problem)."""


def resolve_source(source: str, log: Callable[[str], None] = print) -> Path:
    """A local ``save_pretrained`` folder as is, or a hub id downloaded with ``huggingface_hub``.

    Raises:
        MarianImportError: not a folder and not downloadable (offline, unknown id, package missing).
    """
    path = Path(source)
    if path.exists():
        if not path.is_dir():
            raise MarianImportError(f"{path}: not a directory (give a save_pretrained folder or a hub id)")
        return path
    if source.count("/") != 1 or source.startswith((".", "/")):
        raise MarianImportError(f"{source}: no such directory, and not a hub id like Helsinki-NLP/opus-mt-ko-en")
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise MarianImportError('downloading from the hub needs `pip install -e ".[import]"` (huggingface_hub)') from None
    log(f"downloading {source} from the Hugging Face hub …")
    try:  # safetensors when the repo has it; the .bin only otherwise (never both: 300 MB each)
        folder = Path(snapshot_download(source, allow_patterns=[f for f in HUB_FILES if f != "pytorch_model.bin"]))
        if not (folder / "model.safetensors").is_file():
            folder = Path(snapshot_download(source, allow_patterns=HUB_FILES))
        return folder
    except Exception as exc:  # offline, 404, gated: one line
        raise MarianImportError(f"{source}: download failed ({type(exc).__name__}: {str(exc).splitlines()[0][:150]})") from None


def _read_json(file: Path) -> dict:
    if not file.is_file():
        raise MarianImportError(f"{file}: missing")
    try:
        data = read_json(file)  # bounded: size cap, "nested too deeply" instead of RecursionError
    except ValueError as exc:
        raise MarianImportError(str(exc)) from None
    if not isinstance(data, dict):
        raise MarianImportError(f"{file}: expected a JSON object")
    return data


def marian_config(hf: dict, src: Path) -> ModelConfig:
    """Translate a Hugging Face ``MarianConfig`` dict into our :class:`ModelConfig`.

    Raises:
        MarianImportError: not Marian, or an option our model cannot express (named).
    """
    where = src / "config.json"
    if hf.get("model_type") != "marian":
        raise MarianImportError(f"{where}: model_type is {hf.get('model_type')!r}, not 'marian'")

    def need(key):
        if key not in hf:
            raise MarianImportError(f"{where}: missing {key!r}")
        return hf[key]

    vocab = need("vocab_size")
    if hf.get("decoder_vocab_size") not in (None, vocab) or not hf.get("share_encoder_decoder_embeddings", True):
        raise MarianImportError(f"{where}: separate source/target vocabularies are not supported (joint vocab only)")
    if need("encoder_attention_heads") != need("decoder_attention_heads"):
        raise MarianImportError(f"{where}: encoder and decoder head counts differ")
    if need("encoder_ffn_dim") != need("decoder_ffn_dim"):
        raise MarianImportError(f"{where}: encoder and decoder FFN widths differ")
    act = hf.get("activation_function", "gelu")
    if act not in ACTIVATIONS:
        raise MarianImportError(f"{where}: activation_function {act!r} is not one of {ACTIVATIONS}")
    pad = need("pad_token_id")
    start = hf.get("decoder_start_token_id", pad)
    bad = hf.get("bad_words_ids") or []
    try:
        return ModelConfig(
            src_vocab_size=vocab,
            tgt_vocab_size=vocab,
            d_model=need("d_model"),
            n_heads=hf["encoder_attention_heads"],
            n_encoder_layers=need("encoder_layers"),
            n_decoder_layers=need("decoder_layers"),
            d_ff=hf["encoder_ffn_dim"],
            dropout=float(hf.get("dropout", 0.1)),
            attention_dropout=float(hf.get("attention_dropout", 0.0)),
            activation_dropout=float(hf.get("activation_dropout", 0.0)),
            max_len=need("max_position_embeddings"),
            pad_id=pad,
            bos_id=start,
            eos_id=need("eos_token_id"),
            unk_id=0,  # replaced from vocab.json by the caller
            positional="sinusoidal_halves",
            tie_output=bool(hf.get("tie_word_embeddings", True)),
            share_src_tgt_embed=True,
            norm_first=False,
            scale_embedding=bool(hf.get("scale_embedding", False)),
            activation=act,
            final_logits_bias=True,
            decoder_start_id=start,
            never_output_pad=[pad] in bad,
        )
    except ValueError as exc:
        raise MarianImportError(f"{where}: {exc}") from None


def _tokenizers(src: Path, config: ModelConfig) -> tuple[SentencePieceTokenizer, SentencePieceTokenizer, int]:
    for name in ("source.spm", "target.spm", "vocab.json"):
        if not (src / name).is_file():
            raise MarianImportError(f"{src / name}: missing (a Marian model needs source.spm, target.spm and vocab.json)")
    if (src / "target_vocab.json").is_file():
        raise MarianImportError(f"{src / 'target_vocab.json'}: separate target vocabularies are not supported")
    vocab = _read_json(src / "vocab.json")
    if len(vocab) != config.src_vocab_size:
        raise MarianImportError(
            f"{src / 'vocab.json'}: {len(vocab)} entries, but the embedding has {config.src_vocab_size} rows (vocab_size)"
        )
    tok_cfg = _read_json(src / "tokenizer_config.json") if (src / "tokenizer_config.json").is_file() else {}
    specials = {
        k: tok_cfg.get(k, d) if isinstance(tok_cfg.get(k, d), str) else d
        for k, d in (("pad_token", "<pad>"), ("eos_token", "</s>"), ("unk_token", "<unk>"))
    }
    try:
        src_tok = SentencePieceTokenizer(src / "source.spm", vocab, **specials)
        # output text as transformers >= 5 makes it for a joint vocabulary: pieces joined by source.spm
        tgt_tok = SentencePieceTokenizer(src / "target.spm", vocab, **specials, decode_model_file=src / "source.spm")
    except ValueError as exc:
        raise MarianImportError(f"{src / 'vocab.json'}: {exc}") from None
    if src_tok.pad_id != config.pad_id or src_tok.eos_id != config.eos_id:
        raise MarianImportError(
            f"{src / 'vocab.json'}: pad/eos ids {src_tok.pad_id}/{src_tok.eos_id} differ from "
            f"config.json's {config.pad_id}/{config.eos_id}"
        )
    return src_tok, tgt_tok, src_tok.unk_id


def _card(source: str, config: ModelConfig, n_params: int, learned: bool) -> str:
    pos = "learned (stored table)" if learned else "sinusoidal, sin half then cos half"
    return (
        f"# {source} (imported)\n\nA Marian (OPUS-MT) Transformer converted by `python -m core import-marian {source}` "
        f"into Attention Studio's own `core` model; every number the app shows is computed by our code.\n\n"
        f"- d_model {config.d_model}, {config.n_heads} heads, {config.n_encoder_layers}+{config.n_decoder_layers} layers, "
        f"d_ff {config.d_ff}, {config.activation} FFN, vocabulary {config.src_vocab_size} (joint SentencePiece), "
        f"{n_params:,} parameters\n- positions: {pos}; embeddings scaled by √d_model: {config.scale_embedding}\n"
        f"- decoder starts from pad (id {config.pad_id}); eos {config.eos_id}, unk {config.unk_id}\n\n"
        f"Licence of the weights: {LICENCE}. Published scores for Helsinki-NLP/opus-mt-ko-en (not measured here): "
        f"Tatoeba BLEU 41.3, chrF 58.8.\n"
    )


def import_marian(source: str, out: str | Path, log: Callable[[str], None] = print, force: bool = False) -> Path:
    """Convert the Marian model at ``source`` (folder or hub id) into a checkpoint folder ``out``.

    Returns the checkpoint path; the result is verified by loading it with
    :func:`core.checkpoints.checkpoint.load_checkpoint`.
    Raises:
        MarianImportError: bad source (not Marian, missing spm file, vocabulary/embedding
            mismatch, pickled code in pytorch_model.bin, …) or ``out`` may not be written: it
            exists and is not empty (with ``force``: it is not a checkpoint folder), or it is the
            source or holds it (:func:`core.checkpoints.output_folder.claim_output`).
            Nothing is changed at ``out`` then.
    """
    out = Path(out)
    try:
        claim_output(out, force, (source,) if Path(source).exists() else ())
    except CheckpointError as exc:
        raise MarianImportError(str(exc)) from None
    src = resolve_source(source, log)
    hf = _read_json(src / "config.json")
    config = marian_config(hf, src)
    src_tok, tgt_tok, unk = _tokenizers(src, config)
    config.unk_id = unk
    gen = src / "generation_config.json"
    if gen.is_file():
        config.never_output_pad = config.never_output_pad or [config.pad_id] in (_read_json(gen).get("bad_words_ids") or [])
    log(f"reading weights from {src}")
    state = read_marian_weights(src)
    learned = False
    for side in ("encoder", "decoder"):
        table = state.get(f"model.{side}.embed_positions.weight")
        if table is not None:
            learned |= not torch.allclose(table.float(), sinusoid_table(table.shape[0], table.shape[1], "halves"), atol=1e-5)
    if learned:
        config.positional = "learned"
    config.validate()
    check_fits_memory(config)
    model = Transformer(config)
    try:
        model.load_state_dict(convert_state_dict(state, config, src), strict=True)
    except RuntimeError as exc:
        raise MarianImportError(f"{src}: weights do not fit config.json ({str(exc).splitlines()[0][:150]})") from None
    log(f"writing {model.num_parameters():,} parameters")
    if out.parent.is_dir():
        sweep_stale(out.parent)  # what an earlier killed import left there
    with atomic_dir(out) as tmp:  # a killed import leaves no half folder under the name --out
        write_checkpoint_files(
            tmp, model, src_tok, tgt_tok, card=_card(source, config, model.num_parameters(), learned), name=out.name
        )
        (tmp / "marian_source.json").write_text(
            json.dumps({"source": source, "licence": LICENCE, "hf_config": hf}, indent=2) + "\n", encoding="utf-8"
        )
        load_checkpoint(tmp, device="cpu")  # refuse to publish something that does not load
    log(f"wrote {out}")
    return out
