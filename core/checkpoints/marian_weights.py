"""Read a Hugging Face Marian state dict safely and rename it into our Transformer's names.

Only ``model.safetensors`` or ``pytorch_model.bin`` loaded with ``torch.load(weights_only=True)``
(plain tensors only: a pickle that would construct any other object is refused, so no code in
the file ever runs).
"""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors import safe_open

from core.errors import CheckpointError
from core.transformer.config import ModelConfig

EMBED_NAMES = ("model.shared.weight", "model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight")
ATTN = {"q_proj": "w_q", "k_proj": "w_k", "v_proj": "w_v", "out_proj": "w_o"}
ENC_PARTS = {
    "self_attn": "self_attn",
    "self_attn_layer_norm": "norm1",
    "fc1": "ff.linear1",
    "fc2": "ff.linear2",
    "final_layer_norm": "norm2",
}
DEC_PARTS = {
    "self_attn": "self_attn",
    "self_attn_layer_norm": "norm1",
    "encoder_attn": "cross_attn",
    "encoder_attn_layer_norm": "norm2",
    "fc1": "ff.linear1",
    "fc2": "ff.linear2",
    "final_layer_norm": "norm3",
}


def read_marian_weights(src: Path) -> dict[str, torch.Tensor]:
    """All tensors of ``src/model.safetensors`` (preferred) or ``src/pytorch_model.bin``, on CPU.

    Raises:
        CheckpointError: no weights file, unreadable file, or a pickle that is not plain tensors.
    """
    st, pt = src / "model.safetensors", src / "pytorch_model.bin"
    if st.is_file():
        try:
            with safe_open(str(st), framework="pt", device="cpu") as f:
                return {k: f.get_tensor(k) for k in f.keys()}
        except Exception as exc:
            raise CheckpointError(f"{st}: not a readable safetensors file ({str(exc).splitlines()[0][:120]})") from None
    if pt.is_file():
        try:
            state = torch.load(pt, map_location="cpu", weights_only=True)
        except Exception as exc:  # UnpicklingError for pickled code, others for junk
            raise CheckpointError(
                f"{pt}: refused: not a plain tensor pickle (loaded with weights_only=True so no code runs: "
                f"{str(exc).splitlines()[0][:120]})"
            ) from None
        if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
            raise CheckpointError(f"{pt}: expected a state dict of tensors")
        return state
    raise CheckpointError(f"{src}: no model.safetensors or pytorch_model.bin")


def convert_state_dict(state: dict[str, torch.Tensor], c: ModelConfig, src: Path) -> dict[str, torch.Tensor]:
    """Marian names → our names (see :mod:`core.transformer.model`), float32.

    ``model.{encoder,decoder}.layers.i.{self_attn,encoder_attn}.{q,k,v,out}_proj`` →
    ``{encoder,decoder}_layers.i.{self_attn,cross_attn}.w_{q,k,v,o}``; layer norms in order
    norm1..norm3; ``fc1/fc2`` → ``ff.linear1/2``; the shared embedding → ``src_embed`` (tied to
    ``tgt_embed`` and, with ``tie_output``, the generator); ``final_logits_bias [1, V]`` → ``[V]``;
    stored position tables → ``src_pos.table``/``tgt_pos.table`` when ``positional == "learned"``.

    Raises:
        CheckpointError: a tensor is missing or has the wrong shape (named).
    """

    def take(name: str) -> torch.Tensor:
        if name not in state:
            raise CheckpointError(f"{src}: weights lack {name}")
        return state[name].float()

    out: dict[str, torch.Tensor] = {}
    embed = next((state[n] for n in EMBED_NAMES if n in state), None)
    if embed is None:
        raise CheckpointError(f"{src}: weights lack the shared embedding (model.shared.weight)")
    if tuple(embed.shape) != (c.src_vocab_size, c.d_model):
        raise CheckpointError(
            f"{src}: embedding is {tuple(embed.shape)}, config.json implies "
            f"({c.src_vocab_size}, {c.d_model}); vocabulary and embedding rows disagree"
        )
    out["src_embed.weight"] = embed.float()
    out["tgt_embed.weight"] = out["src_embed.weight"]
    if c.tie_output:
        out["generator.weight"] = out["src_embed.weight"]
    else:
        out["generator.weight"] = take("lm_head.weight")
    bias = state.get("final_logits_bias", torch.zeros(1, c.tgt_vocab_size))
    out["final_logits_bias"] = bias.float().reshape(-1)
    if c.positional == "learned":
        out["src_pos.table.weight"] = take("model.encoder.embed_positions.weight")
        out["tgt_pos.table.weight"] = take("model.decoder.embed_positions.weight")
    for side, n, parts in (("encoder", c.n_encoder_layers, ENC_PARTS), ("decoder", c.n_decoder_layers, DEC_PARTS)):
        for i in range(n):
            for theirs, ours in parts.items():
                base_t, base_o = f"model.{side}.layers.{i}.{theirs}", f"{side}_layers.{i}.{ours}"
                if theirs in ("self_attn", "encoder_attn"):
                    for proj, w in ATTN.items():
                        for kind in ("weight", "bias"):
                            out[f"{base_o}.{w}.{kind}"] = take(f"{base_t}.{proj}.{kind}")
                else:
                    for kind in ("weight", "bias"):
                        out[f"{base_o}.{kind}"] = take(f"{base_t}.{kind}")
    return out
