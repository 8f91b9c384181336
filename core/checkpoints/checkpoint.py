"""Checkpoint = a directory; weights in safetensors, everything else JSON or text. No pickle.

Layout::

    config.json            ModelConfig
    model.safetensors      weights (tied matrices stored once)
    tokenizer_src.json     source (Korean) BPE tokenizer, or a SentencePiece descriptor (OPUS-MT import:
    tokenizer_tgt.json     target (English)  source.spm, target.spm and vocab.json sit beside it)
    README.md              model card

Anything wrong raises :class:`core.errors.CheckpointError` naming the file and the problem.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file

from core.checkpoints.atomic_io import atomic_dir
from core.checkpoints.precision import check_precision, column_major_linears, convert_model
from core.device import resolve_device
from core.errors import CheckpointError
from core.textio import MAX_JSON_BYTES, check_regular_file, read_json
from core.tokenizers.files import load_tokenizer
from core.tokenizers.protocol import SubwordTokenizer
from core.transformer.config import ModelConfig, check_fits_memory
from core.transformer.model import Transformer

CONFIG = "config.json"
WEIGHTS = "model.safetensors"
WEIGHTS_MAX_BYTES = 16 << 30  # read through mmap; ModelConfig.validate bounds the shapes it may hold
SRC_TOKENIZER = "tokenizer_src.json"
TGT_TOKENIZER = "tokenizer_tgt.json"
CARD = "README.md"
REQUIRED = (CONFIG, WEIGHTS, SRC_TOKENIZER, TGT_TOKENIZER)
Progress = Callable[[str, float], None]
PICKLE_SUFFIXES = {".pt", ".pth", ".pkl", ".pickle", ".ckpt", ".bin", ".joblib"}


@dataclass
class Checkpoint:
    """A loaded model with its tokenizers. ``model`` is in eval mode on ``device``.

    ``precision``: what the model runs at, "fp32" (as stored), "bf16", "int8" or "int8-output"; see
    :mod:`core.checkpoints.precision`."""

    path: Path
    config: ModelConfig
    model: Transformer
    src_tokenizer: SubwordTokenizer
    tgt_tokenizer: SubwordTokenizer
    device: torch.device
    precision: str = "fp32"

    @property
    def name(self) -> str:
        return self.path.name


def _unique_state(model: Transformer) -> dict[str, torch.Tensor]:
    """State dict without aliases of tied matrices (first name wins), in module order."""
    seen: set[int] = set()
    out = {}
    for name, t in model.state_dict().items():
        if t.data_ptr() in seen:
            continue
        seen.add(t.data_ptr())
        out[name] = t
    return out


def write_checkpoint_files(
    path: Path,
    model: Transformer,
    src_tokenizer: SubwordTokenizer,
    tgt_tokenizer: SubwordTokenizer,
    card: str | None = None,
    name: str | None = None,
) -> None:
    """Write config, weights (CPU float32), both tokenizers and the model card into the existing
    folder ``path`` (``name`` titles the default card). Not atomic by itself: callers write into an
    :func:`~core.checkpoints.atomic_io.atomic_dir` folder."""
    model.config.save(path / CONFIG)
    tensors = {k: v.detach().to("cpu", torch.float32).contiguous() for k, v in _unique_state(model).items()}
    save_file(tensors, str(path / WEIGHTS), metadata={"format": "pt", "producer": "attention-studio"})
    src_tokenizer.save(path / SRC_TOKENIZER)
    tgt_tokenizer.save(path / TGT_TOKENIZER)
    c = model.config
    (path / CARD).write_text(
        card
        or (
            f"# {name or path.name}\n\nKorean→English Transformer (Attention Is All You Need), "
            f"d_model {c.d_model}, {c.n_heads} heads, {c.n_encoder_layers}+{c.n_decoder_layers} layers, "
            f"d_ff {c.d_ff}, {model.num_parameters():,} parameters.\n"
        ),
        encoding="utf-8",
    )


def save_checkpoint(
    path: str | Path,
    model: Transformer,
    src_tokenizer: SubwordTokenizer,
    tgt_tokenizer: SubwordTokenizer,
    card: str | None = None,
) -> Path:
    """Write the checkpoint directory ``path`` crash-safely: built completely under a temporary
    name, fsynced, then renamed into place (an existing ``path`` is replaced as a whole), so a
    crash leaves the old checkpoint or the new one, never a mix. Weights go to CPU float32.

    Raises:
        OSError: the disk is full or not writable; ``path`` is left as it was.
    """
    path = Path(path)
    with atomic_dir(path) as tmp:
        write_checkpoint_files(tmp, model, src_tokenizer, tgt_tokenizer, card, name=path.name)
    return path


def _read_config(path: Path) -> ModelConfig:
    try:
        data = read_json(path / CONFIG)
    except ValueError as exc:
        raise CheckpointError(str(exc)) from None
    try:
        config = ModelConfig.from_dict(data)
        check_fits_memory(config)  # before the model is built
        return config
    except ValueError as exc:
        raise CheckpointError(f"{path / CONFIG}: {exc}") from None


def _read_tokenizer(file: Path, config: ModelConfig, side: str) -> SubwordTokenizer:
    vocab_size = config.src_vocab_size if side == "src" else config.tgt_vocab_size
    try:
        tok = load_tokenizer(file)
    except ValueError as exc:  # ours: names the file it refused (a descriptor's model, a FIFO, too large)
        raise CheckpointError((str(exc).splitlines() or [str(file)])[0][:400]) from None
    except Exception as exc:  # tokenizers raises plain Exception on bad JSON
        raise CheckpointError(f"{file}: not a valid tokenizer ({_first_line(exc)})") from None
    if tok.vocab_size != vocab_size:
        raise CheckpointError(
            f"{file}: vocabulary has {tok.vocab_size} entries but config.json says {side}_vocab_size {vocab_size}"
        )
    for name in ("pad_id", "eos_id", "unk_id"):
        if getattr(tok, name) != getattr(config, name):
            raise CheckpointError(f"{file}: tokenizer {name} {getattr(tok, name)} != config.json {name} {getattr(config, name)}")
    return tok


def _first_line(exc: Exception) -> str:
    """The first line of ``exc``'s message (at most 120 characters), or its type name if empty."""
    return (str(exc).splitlines() or [type(exc).__name__])[0][:120]


class _FromProgress(Exception):
    """Carries an exception raised by the caller's ``progress`` out of the reading ``try``."""


def _read_weights(file: Path, model: Transformer, progress: Progress | None = None) -> dict[str, torch.Tensor]:
    expected = _unique_state(model)

    def report(message: str, fraction: float) -> None:
        if progress is None:
            return
        try:
            progress(message, fraction)
        except Exception as exc:  # the caller's own exception (e.g. a cancel): not a file error
            raise _FromProgress() from exc

    try:
        with safe_open(str(file), framework="pt", device="cpu") as f:
            keys = set(f.keys())
            missing = sorted(set(expected) - keys)
            unexpected = sorted(keys - set(expected))
            if missing or unexpected:
                parts = []
                if missing:
                    parts.append(f"missing {len(missing)} tensors (e.g. {missing[0]})")
                if unexpected:
                    parts.append(f"unexpected {len(unexpected)} tensors (e.g. {unexpected[0]})")
                raise CheckpointError(f"{file}: does not match config.json: {'; '.join(parts)}")
            tensors = {}
            for i, k in enumerate(expected):
                tensors[k] = f.get_tensor(k)
                if progress is not None and (i % 8 == 0 or i == len(expected) - 1):
                    report(f"reading weights ({i + 1}/{len(expected)} tensors)", 0.1 + 0.8 * (i + 1) / len(expected))
    except CheckpointError:
        raise
    except _FromProgress as wrapped:
        cause = wrapped.__cause__
        assert cause is not None  # (always raised "from" the caller's exception)
        raise cause from None
    except Exception as exc:  # SafetensorError, OSError on truncated/random bytes
        raise CheckpointError(f"{file}: not a readable safetensors file ({_first_line(exc)})") from None
    for k, t in tensors.items():
        want = tuple(expected[k].shape)
        if tuple(t.shape) != want:
            raise CheckpointError(f"{file}: tensor {k} has shape {tuple(t.shape)}, config.json implies {want}")
        if not t.is_floating_point():
            raise CheckpointError(f"{file}: tensor {k} has dtype {t.dtype}, expected floating point")
        if not torch.isfinite(t).all():
            raise CheckpointError(f"{file}: tensor {k} contains NaN or infinity")
    return tensors


def load_checkpoint(
    path: str | Path, device: str = "auto", progress: Progress | None = None, precision: str = "fp32"
) -> Checkpoint:
    """Load a checkpoint directory onto ``device`` ("auto", "cpu" or "cuda").

    ``precision`` ("fp32", "bf16", "int8" or "int8-output", see :mod:`core.checkpoints.precision`): convert the
    model for inference after loading; the default "fp32" keeps the weights as stored. With "int8"
    or "int8-output", ``device="auto"`` means the CPU (int8 runs there only).

    ``progress(message, fraction)`` (optional) is called as loading goes on, fraction in [0, 1]
    (the app shows it while a large imported model, e.g. OPUS-MT's 300 MB, loads). An exception
    that ``progress`` raises (e.g. to cancel the load) propagates unchanged.

    Weights saved on a GPU load on a CPU-only machine (safetensors holds plain tensors).
    Pickle files are never opened: a directory containing one is refused.

    Raises:
        CheckpointError: missing directory or file, invalid JSON or config, tokenizer/config
            mismatch, unreadable/truncated weights, wrong tensor names or shapes, pickle present.
        ValueError: unknown device, or "cuda" without a GPU; unknown precision, or "int8" on a GPU.
    """
    check_precision(precision)  # a bad option fails before anything is read
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"{path}: no such directory")
    if not path.is_dir():
        hint = " (pickle files are never loaded)" if path.suffix in PICKLE_SUFFIXES else ""
        raise CheckpointError(f"{path}: a checkpoint is a directory with {', '.join(REQUIRED)}{hint}")
    pickles = sorted(p.name for p in path.iterdir() if p.suffix.lower() in PICKLE_SUFFIXES)
    if pickles:
        raise CheckpointError(
            f"{path / pickles[0]}: pickle-style file found; it is never loaded because unpickling can run code "
            f"(remove it, or convert the weights to {WEIGHTS})"
        )
    for name in REQUIRED:
        if not (path / name).exists():
            raise CheckpointError(f"{path / name}: missing (a checkpoint needs {', '.join(REQUIRED)})")
        try:  # a FIFO or device would hang or flood the reader; a symlink may not lead out of the folder
            check_regular_file(path / name, WEIGHTS_MAX_BYTES if name == WEIGHTS else MAX_JSON_BYTES, inside=path)
        except (OSError, ValueError) as exc:
            raise CheckpointError(str(exc)) from None
    report = progress or (lambda message, fraction: None)
    report("reading config and tokenizers", 0.0)
    config = _read_config(path)
    src_tok = _read_tokenizer(path / SRC_TOKENIZER, config, "src")
    tgt_tok = _read_tokenizer(path / TGT_TOKENIZER, config, "tgt")
    dev = resolve_device("cpu" if precision.startswith("int8") and device == "auto" else device)  # int8 runs on the CPU
    report("building the model", 0.05)
    model = Transformer(config, init_weights=False)  # every weight is read next (_read_weights checks)
    tensors = _read_weights(path / WEIGHTS, model, report)
    model.load_state_dict(tensors, strict=False)  # tied aliases are filled through their twin
    report(f"moving to {dev.type.upper()}", 0.95)
    model.to(dev).eval()
    if dev.type == "cpu" and precision == "fp32":
        column_major_linears(model)  # faster one-token steps; same values (see its docstring)
    ckpt = Checkpoint(path, config, model, src_tok, tgt_tok, dev)
    if precision != "fp32":
        report(f"converting to {precision}", 0.97)
        to_precision(ckpt, precision)
    report("loaded", 1.0)
    return ckpt


def to_precision(ckpt: Checkpoint, precision: str) -> Checkpoint:
    """Convert a loaded checkpoint's model in place (:func:`core.checkpoints.precision.convert_model`),
    set ``ckpt.precision`` and return ``ckpt``. Tokenizers and config are unchanged.

    Raises:
        ValueError: as :func:`core.checkpoints.precision.convert_model`.
    """
    convert_model(ckpt.model, precision)
    ckpt.precision = precision
    return ckpt
