"""The benchmark's memory floor counts exactly the weights one cached decoder step reads."""

from __future__ import annotations

import pytest
import torch

from bench.opus_size import step_weight_bytes
from core.transformer.config import ModelConfig
from core.transformer.model import Transformer


@pytest.mark.parametrize("norm_first, final_bias, tie", [(True, False, True), (False, True, False)])
def test_step_weight_bytes_matches_hand_count(norm_first, final_bias, tie):
    d, f, v, n_dec = 16, 40, 50, 3
    cfg = ModelConfig(
        src_vocab_size=60,
        tgt_vocab_size=v,
        d_model=d,
        n_heads=2,
        n_encoder_layers=2,
        n_decoder_layers=n_dec,
        d_ff=f,
        norm_first=norm_first,
        final_logits_bias=final_bias,
        tie_output=tie,
    )
    model = Transformer(cfg)
    per_layer = (
        4 * (d * d + d)  # self-attention q, k, v, o
        + 2 * (d * d + d)  # cross-attention q and o; its k and v see the memory once per sentence
        + (d * f + f)
        + (f * d + d)  # FFN
        + 3 * 2 * d
    )  # three LayerNorms
    expected = n_dec * per_layer + v * d + (2 * d if norm_first else 0) + (v if final_bias else 0)
    assert step_weight_bytes(model) == 4 * expected


def test_step_weight_bytes_counts_bf16_at_two_bytes():
    cfg = ModelConfig(src_vocab_size=30, tgt_vocab_size=30, d_model=8, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=16)
    model = Transformer(cfg)
    fp32 = step_weight_bytes(model)
    assert step_weight_bytes(model.to(torch.bfloat16)) * 2 == fp32
