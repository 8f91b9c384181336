from __future__ import annotations

import json

import pytest
import torch

from core.transformer.config import ModelConfig
from core.transformer.masks import causal_mask, cross_mask, decoder_self_mask, key_padding_mask
from tests.support import tiny_config


def test_masks_are_bool_true_masked_with_expected_shapes():
    ids = torch.tensor([[5, 6, 0], [7, 0, 0]])
    kpm = key_padding_mask(ids, 0)
    assert kpm.dtype == torch.bool and kpm.tolist() == [[False, False, True], [False, True, True]]
    c = causal_mask(3)
    assert c.tolist() == [[False, True, True], [False, False, True], [False, False, False]]
    combined = decoder_self_mask(kpm, c)
    assert combined.shape == (2, 1, 3, 3)
    assert combined[1, 0].tolist() == [[False, True, True], [False, True, True], [False, True, True]]
    assert cross_mask(kpm).shape == (2, 1, 1, 3)


def test_masks_follow_input_device():
    ids = torch.tensor([[1, 0]], device="meta")
    assert key_padding_mask(ids, 0).device.type == "meta"
    assert causal_mask(2, device="meta").device.type == "meta"


def test_config_round_trips_through_json(tmp_path):
    cfg = tiny_config(positional="learned", tie_output=False)
    cfg.save(tmp_path / "config.json")
    assert ModelConfig.load(tmp_path / "config.json") == cfg
    assert json.loads((tmp_path / "config.json").read_text())["d_model"] == 32
    assert cfg.d_head == 8


@pytest.mark.parametrize(
    "bad,msg",
    [
        ({"d_model": "32"}, "d_model must be int"),
        ({"n_heads": 5}, "not divisible"),
        ({"positional": "rope"}, "positional"),
        ({"dropout": 1.5}, "dropout"),
        ({"share_src_tgt_embed": True}, "share_src_tgt_embed"),
    ],
)
def test_config_rejects_bad_values(bad, msg):
    with pytest.raises(ValueError, match=msg):
        tiny_config(**bad)


def test_config_rejects_unknown_keys():
    with pytest.raises(ValueError, match="unknown config keys: colour"):
        ModelConfig.from_dict({**tiny_config().to_dict(), "colour": 1})
