"""Model hyper-parameters as a dataclass that round-trips through ``config.json``."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

POSITIONAL_KINDS = ("sinusoidal", "learned")


@dataclass
class ModelConfig:
    """Hyper-parameters of the encoder-decoder Transformer (paper §3, Table 3).

    ``d_head = d_model // n_heads`` (paper: d_k = d_v = d_model / h).
    ``positional``: "sinusoidal" (§3.5) or "learned" (a trained [max_len, d_model] table).
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

    def __post_init__(self) -> None:
        self.validate()

    @property
    def d_head(self) -> int:
        """Per-head query/key/value width, d_model / n_heads."""
        return self.d_model // self.n_heads

    @property
    def attn_dropout_p(self) -> float:
        """Dropout probability on attention weights."""
        return self.dropout if self.attention_dropout is None else self.attention_dropout

    @property
    def act_dropout_p(self) -> float:
        """Dropout probability on the FFN hidden activation."""
        return self.dropout if self.activation_dropout is None else self.activation_dropout

    def validate(self) -> None:
        """Check types and ranges. Raises ValueError naming the first bad field."""
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            type_name = f.type
            if type_name.endswith(" | None"):
                if value is None:
                    continue
                type_name = type_name[: -len(" | None")]
            want = {"int": int, "float": (int, float), "str": str, "bool": bool}[type_name]
            ok = isinstance(value, want) and not (want is int and isinstance(value, bool))
            if not ok:
                raise ValueError(f"{f.name} must be {f.type}, got {value!r}")
        positive = ("src_vocab_size", "tgt_vocab_size", "d_model", "n_heads", "d_ff", "max_len")
        for name in positive:
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        if self.n_encoder_layers < 1 or self.n_decoder_layers < 1:
            raise ValueError("n_encoder_layers and n_decoder_layers must be >= 1")
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
        for name in ("pad_id", "bos_id", "eos_id", "unk_id"):
            tid = getattr(self, name)
            if not (0 <= tid < min(self.src_vocab_size, self.tgt_vocab_size)):
                raise ValueError(f"{name} {tid} is outside the vocabularies")

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
        """Read ``config.json``. Raises OSError, json.JSONDecodeError or ValueError."""
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
