"""ModelConfig options added for imported (Marian/OPUS-MT) models; our own models keep their defaults."""

from __future__ import annotations

import json

import pytest
import torch

from core.transformer.config import ModelConfig
from core.transformer.layers import FeedForward, sinusoid_table
from core.transformer.model import Transformer
from tests.support import ROOT, tiny_config


def test_shipped_config_without_new_keys_keeps_the_paper_defaults():
    # ko-en-base was saved before these options existed: its config.json must still load as the paper's model
    data = json.loads((ROOT / "checkpoints" / "ko-en-base" / "config.json").read_text(encoding="utf-8"))
    assert "activation" not in data and "scale_embedding" not in data
    c = ModelConfig.from_dict(data)
    assert (c.activation, c.scale_embedding, c.positional, c.final_logits_bias) == ("relu", True, "sinusoidal", False)
    assert c.start_id == c.bos_id == 1 and not c.never_output_pad
    model = Transformer(c)
    assert model.final_logits_bias is None and model.embed_scale == c.d_model**0.5
    assert not any("final_logits_bias" in k for k in model.state_dict())  # the shipped weights load strictly


def test_interleaved_table_is_the_papers_formula_and_halves_is_its_permutation():
    d, n = 16, 50
    pos = torch.arange(n, dtype=torch.float64)[:, None]
    i = torch.arange(d // 2, dtype=torch.float64)
    angle = pos / 10000 ** (2 * i / d)
    inter, halves = sinusoid_table(n, d), sinusoid_table(n, d, "halves")
    assert torch.allclose(inter[:, 0::2].double(), torch.sin(angle), atol=1e-5)
    assert torch.allclose(inter[:, 1::2].double(), torch.cos(angle), atol=1e-5)
    assert torch.allclose(halves[:, : d // 2].double(), torch.sin(angle), atol=1e-7)
    assert torch.allclose(halves[:, d // 2 :].double(), torch.cos(angle), atol=1e-7)


@pytest.mark.parametrize("name", ["relu", "gelu", "swish", "silu"])
def test_activation_options(name):
    torch.manual_seed(0)
    ff = FeedForward(8, 16, 0.0, name)
    x = torch.randn(2, 3, 8)
    h = x @ ff.linear1.weight.T + ff.linear1.bias
    act = {
        "relu": h.clamp(min=0),
        "gelu": 0.5 * h * (1 + torch.erf(h / 2**0.5)),
        "swish": h * torch.sigmoid(h),
        "silu": h * torch.sigmoid(h),
    }[name]
    assert torch.allclose(ff(x), act @ ff.linear2.weight.T + ff.linear2.bias, atol=1e-6)


def test_final_logits_bias_is_added_to_the_logits():
    torch.manual_seed(0)
    model = Transformer(tiny_config(final_logits_bias=True)).eval()
    src, tgt = torch.tensor([[5, 6, 7, 2]]), torch.tensor([[1, 8, 9]])
    with torch.no_grad():
        model.final_logits_bias.normal_()
        with_bias = model(src, tgt)
        bias = model.final_logits_bias.clone()
        model.final_logits_bias.zero_()
        without = model(src, tgt)
    assert torch.allclose(with_bias - without, bias.expand_as(with_bias), atol=1e-5)


def test_scale_embedding_off_uses_raw_embeddings():
    torch.manual_seed(0)
    on = Transformer(tiny_config(n_encoder_layers=1)).eval()
    off = Transformer(tiny_config(n_encoder_layers=1, scale_embedding=False)).eval()
    off.load_state_dict(on.state_dict())
    src = torch.tensor([[5, 6, 7, 2]])
    with torch.no_grad():
        on.src_embed.weight.mul_(1 / on.embed_scale)  # on's scaled embedding == off's raw one
        assert torch.allclose(on.encode(src).memory, off.encode(src).memory, atol=1e-5)


def test_decoder_start_equal_to_pad_is_not_masked_in_forward():
    torch.manual_seed(0)
    c = tiny_config(pad_id=35, bos_id=35, decoder_start_id=35, eos_id=0, unk_id=1, src_vocab_size=36, share_src_tgt_embed=True)
    model = Transformer(c).eval()
    src, tgt = torch.tensor([[5, 6, 7, 0]]), torch.tensor([[35, 8, 9]])
    with torch.no_grad():
        enc = model.encode(src)
        explicit = model.decode(tgt, enc.memory, enc.src_key_padding_mask, torch.zeros(1, 3, dtype=torch.bool)).logits
        assert torch.allclose(model(src, tgt), explicit, atol=1e-6)


@pytest.mark.parametrize("bad", [dict(activation="tanh"), dict(decoder_start_id=99), dict(positional="rotary")])
def test_bad_option_values_are_refused(bad):
    with pytest.raises(ValueError):
        tiny_config(**bad)


def test_the_host_memory_limit_is_checked_where_a_model_is_built_not_in_the_config(tiny_checkpoint, tmp_path, monkeypatch):
    import json
    import shutil

    import core.transformer.config as config_mod
    from core.checkpoints.checkpoint import load_checkpoint
    from core.errors import CheckpointError
    from core.transformer.config import ModelConfig, check_fits_memory

    monkeypatch.setattr(config_mod, "machine_memory_bytes", lambda: 1 << 10)  # a 1 KiB machine
    ck = tmp_path / "ck"
    shutil.copytree(tiny_checkpoint, ck)
    data = json.loads((ck / "config.json").read_text(encoding="utf-8"))
    config = ModelConfig.from_dict(data)  # hyper-parameters alone: valid on any machine
    with pytest.raises(ValueError, match=r"would need .* GiB of float32 weights, more than half of this machine's"):
        check_fits_memory(config)
    with pytest.raises(CheckpointError, match=r"config.json: the model would need"):
        load_checkpoint(ck, device="cpu")
