"""Model hyper-parameters as a dataclass that round-trips through ``config.json``."""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path

POSITIONAL_KINDS = ("sinusoidal", "sinusoidal_halves", "learned")
# Upper bounds checked before any tensor is made: far above any real translation model (OPUS-MT
# big: d_model 1024, 16 heads, d_ff 4096, 12+12 layers, 64k vocabulary; NLLB: 256k vocabulary),
# far below what would exhaust a machine or hang the CLI building layers.
LIMITS = {
    "d_model": 16_384,
    "n_heads": 1_024,
    "d_ff": 131_072,
    "n_encoder_layers": 256,
    "n_decoder_layers": 256,
    "src_vocab_size": 2_000_000,
    "tgt_vocab_size": 2_000_000,
    "max_len": 131_072,
}


def machine_memory_bytes() -> int:
    """Physical memory of this machine in bytes (16 GiB where the OS does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return 16 << 30


def check_fits_memory(config: ModelConfig) -> None:
    """A host limit, checked where a model is about to be built from a file or options (checkpoint
    load, OPUS-MT import, training), before anything is allocated: the float32 weights may take at
    most half of this machine's memory.

    Raises:
        ValueError: the model would need more (the message gives both sizes in GiB).
    """
    need, have = 4 * config.estimated_parameters(), machine_memory_bytes()
    if need > have // 2:
        raise ValueError(
            f"the model would need {need / 2**30:.1f} GiB of float32 weights, more than half of "
            f"this machine's {have / 2**30:.1f} GiB memory"
        )


ACTIVATIONS = ("relu", "gelu", "swish", "silu")  # swish and silu are the same function, x·σ(x)


@dataclass
class ModelConfig:
    """Hyper-parameters of the encoder-decoder Transformer (paper §3, Table 3).

    ``d_head = d_model // n_heads`` (paper: d_k = d_v = d_model / h).
    ``positional``: "sinusoidal" (§3.5, interleaved: even features sin, odd features cos),
    "sinusoidal_halves" (the same frequencies in Marian/OPUS-MT's layout: features
    ``[0, D/2)`` are the sines, ``[D/2, D)`` the cosines; the table is computed in float64),
    or "learned" (a trained ``[max_len, d_model]`` table).
    ``scale_embedding``: multiply token embeddings by √d_model before adding positions (§3.4).
    True for the paper and OPUS-MT; False gives BART/Marian-``scale_embedding: false`` models.
    ``activation``: the FFN non-linearity (Eq. 2 uses "relu"); "gelu" (exact, erf form) or
    "swish"/"silu" (x·σ(x), what OPUS-MT uses).
    ``final_logits_bias``: a ``[tgt_vocab_size]`` bias added to the logits after the (tied)
    output projection, as Marian's ``final_logits_bias``. False: no bias (the paper).
    ``decoder_start_id``: the token fed as the first decoder input. ``None`` means ``bos_id``
    (our models). OPUS-MT has no BOS and starts from pad, so its import sets both
    ``decoder_start_id`` and ``bos_id`` to ``pad_id``; see :attr:`start_id`.
    ``never_output_pad``: decoders never choose ``pad_id`` as an output token (Marian's
    ``bad_words_ids = [[pad]]``); the logits themselves are unchanged.
    ``pad_id``/``bos_id``/``eos_id``/``unk_id``: special token ids; ours are 0/1/2/3,
    OPUS-MT's are pad = last id, eos 0, unk 1.
    ``tie_output``: the target embedding and the pre-softmax projection share one matrix
    (§3.4). ``share_src_tgt_embed``: source and target embeddings are one matrix too
    (only valid when both vocabularies are the same size, i.e. a joint vocabulary).
    ``norm_first``: pre-layer-norm (Nguyen & Salazar 2019, "Transformers without Tears"):
    x + Sublayer(LayerNorm(x)) and a final LayerNorm after each stack. A deviation from the
    paper's post-LN x = LayerNorm(x + Sublayer(x)) (§3.1); converges faster on small data.
    ``dropout``: residual dropout (§5.4: each sub-layer's output and the embedding sums).
    ``attention_dropout``: on the attention weights; ``activation_dropout``: on the FFN's
    hidden activation. ``None`` means "same as ``dropout``" (what models before these
    options did).

    Raises:
        ValueError: on inconsistent or mistyped values (see :meth:`validate`).
    """

    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 256
    n_heads: int = 4
    n_encoder_layers: int = 3
    n_decoder_layers: int = 3
    d_ff: int = 1024
    dropout: float = 0.1
    max_len: int = 256
    pad_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    unk_id: int = 3
    positional: str = "sinusoidal"
    tie_output: bool = True
    share_src_tgt_embed: bool = False
    norm_first: bool = False
    attention_dropout: float | None = None
    activation_dropout: float | None = None
    scale_embedding: bool = True
    activation: str = "relu"
    final_logits_bias: bool = False
    decoder_start_id: int | None = None
    never_output_pad: bool = False

    def __post_init__(self) -> None:
        self.validate()

    @property
    def d_head(self) -> int:
        """Per-head query/key/value width, d_model / n_heads."""
        return self.d_model // self.n_heads

    @property
    def start_id(self) -> int:
        """The first decoder input: ``decoder_start_id``, or ``bos_id`` when that is None."""
        return self.bos_id if self.decoder_start_id is None else self.decoder_start_id

    @property
    def attn_dropout_p(self) -> float:
        """Dropout probability on attention weights."""
        return self.dropout if self.attention_dropout is None else self.attention_dropout

    @property
    def act_dropout_p(self) -> float:
        """Dropout probability on the FFN hidden activation."""
        return self.dropout if self.activation_dropout is None else self.activation_dropout

    def validate(self) -> None:
        """Check types and ranges (hyper-parameters only; whether the machine can hold the model is
        :func:`check_fits_memory`, asked where a model is built from a file). Raises ValueError naming
        the first bad field."""
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            type_name = f.type
            if type_name.endswith(" | None"):
                if value is None:
                    continue
                type_name = type_name[: -len(" | None")]
            kinds: dict[str, type | tuple[type, ...]] = {"int": int, "float": (int, float), "str": str, "bool": bool}
            want = kinds[str(type_name)]
            ok = isinstance(value, want) and not (want is int and isinstance(value, bool))
            if not ok:
                raise ValueError(f"{f.name} must be {f.type}, got {value!r}")
        positive = ("src_vocab_size", "tgt_vocab_size", "d_model", "n_heads", "d_ff", "max_len")
        for name in positive:
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        if self.n_encoder_layers < 1 or self.n_decoder_layers < 1:
            raise ValueError("n_encoder_layers and n_decoder_layers must be >= 1")
        for name, top in LIMITS.items():
            if getattr(self, name) > top:
                raise ValueError(f"{name} {getattr(self, name):,} is larger than this program supports ({top:,})")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model {self.d_model} is not divisible by n_heads {self.n_heads}")
        for name in ("dropout", "attention_dropout", "activation_dropout"):
            p = getattr(self, name)
            if p is not None and not 0.0 <= p < 1.0:
                raise ValueError(f"{name} must be in [0, 1), got {p}")
        if self.positional not in POSITIONAL_KINDS:
            raise ValueError(f"positional must be one of {POSITIONAL_KINDS}, got {self.positional!r}")
        if self.share_src_tgt_embed and self.src_vocab_size != self.tgt_vocab_size:
            raise ValueError("share_src_tgt_embed needs src_vocab_size == tgt_vocab_size")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {ACTIVATIONS}, got {self.activation!r}")
        for name in ("pad_id", "bos_id", "eos_id", "unk_id", "decoder_start_id"):
            tid = getattr(self, name)
            if tid is None:
                continue
            if not (0 <= tid < min(self.src_vocab_size, self.tgt_vocab_size)):
                raise ValueError(f"{name} {tid} is outside the vocabularies")

    def estimated_parameters(self) -> int:
        """Parameter count (plus the positional table) of the model this config describes,
        computed from the sizes alone so it can be checked before anything is allocated."""
        d, f = self.d_model, self.d_ff
        embed = self.src_vocab_size * d + (0 if self.share_src_tgt_embed else self.tgt_vocab_size * d)
        encoder = self.n_encoder_layers * (4 * d * d + 2 * d * f + 9 * d + f)
        decoder = self.n_decoder_layers * (8 * d * d + 2 * d * f + 15 * d + f)
        return embed + encoder + decoder + 2 * self.max_len * d + self.tgt_vocab_size

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> ModelConfig:
        """Build from a dict; unknown keys raise ValueError (a typo must not pass silently)."""
        if not isinstance(data, dict):
            raise ValueError(f"config must be a JSON object, got {type(data).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"unknown config keys: {', '.join(unknown)}")
        try:
            return cls(**data)
        except TypeError as exc:  # missing required keys
            raise ValueError(str(exc)) from exc

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> ModelConfig:
        """Read ``config.json``. Raises OSError or ValueError (bad JSON, too large, too deep)."""
        from core.textio import read_json

        return cls.from_dict(read_json(path))
