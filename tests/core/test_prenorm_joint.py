"""Pre-LN layers (Nguyen & Salazar 2019) and joint vocabulary with three-way tying: parity with
torch.nn.Transformer(norm_first=True), cached decoding == full pass, and the training options
(bf16 autocast, joint vocabulary, warm start) end to end on fixture data."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from core.checkpoints.checkpoint import load_checkpoint
from core.training.train import TrainOptions, train
from core.transformer.model import Transformer
from tests.core.test_attention import copy_into_torch, padded_batch, reference_logits
from tests.support import FIXTURES, tiny_config


def test_pre_ln_matches_torch_nn_transformer_norm_first():
    cfg = tiny_config(norm_first=True)
    torch.manual_seed(0)
    ours = Transformer(cfg).train()
    ref = nn.Transformer(
        cfg.d_model,
        cfg.n_heads,
        cfg.n_encoder_layers,
        cfg.n_decoder_layers,
        cfg.d_ff,
        dropout=0.0,
        batch_first=True,
        norm_first=True,
    )
    copy_into_torch(ours, ref)
    with torch.no_grad():
        ref.encoder.norm.load_state_dict(ours.encoder_norm.state_dict())
        ref.decoder.norm.load_state_dict(ours.decoder_norm.state_dict())
    src, tgt = padded_batch(cfg)
    torch.testing.assert_close(ours(src, tgt), reference_logits(ours, ref, src, tgt), atol=1e-5, rtol=0)


@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_steps_equal_full_pass(norm_first):
    cfg = tiny_config(norm_first=norm_first)
    torch.manual_seed(2)
    model = Transformer(cfg).eval()
    src, tgt = padded_batch(cfg, pad_tgt=(0, 0))
    with torch.no_grad():
        enc = model.encode(src, need_weights=True)
        full = model.decode(tgt, enc.memory, enc.src_key_padding_mask, need_weights=True)
        cache, logits = None, []
        for t in range(tgt.size(1)):
            o = model.decode(tgt[:, t : t + 1], enc.memory, enc.src_key_padding_mask, need_weights=True, cache=cache)
            cache = o.cache
            logits.append(o.logits)
            torch.testing.assert_close(o.cross_attn[-1][:, :, 0], full.cross_attn[-1][:, :, t], atol=1e-5, rtol=0)
    torch.testing.assert_close(torch.cat(logits, 1), full.logits, atol=1e-5, rtol=0)


def test_joint_vocabulary_ties_three_matrices():
    cfg = tiny_config(src_vocab_size=50, tgt_vocab_size=50, share_src_tgt_embed=True)
    model = Transformer(cfg)
    assert model.src_embed.weight is model.tgt_embed.weight is model.generator.weight
    with pytest.raises(ValueError, match="share_src_tgt_embed"):
        tiny_config(share_src_tgt_embed=True)  # 40 vs 36 entries


def test_dropout_options_validate_and_default_to_dropout():
    cfg = tiny_config(dropout=0.3)
    assert cfg.attn_dropout_p == 0.3 and cfg.act_dropout_p == 0.3
    cfg = tiny_config(dropout=0.3, attention_dropout=0.1, activation_dropout=0.0)
    model = Transformer(cfg)
    assert model.encoder_layers[0].self_attn.dropout_p == 0.1
    assert model.decoder_layers[0].ff.dropout.p == 0.0 and model.decoder_layers[0].dropout.p == 0.3
    with pytest.raises(ValueError, match="attention_dropout"):
        tiny_config(attention_dropout=1.5)


def _opts(out, **kw):
    base = dict(
        train=[f"{FIXTURES / 'tiny'}*2"],
        valid=[str(FIXTURES / "tiny")],
        out=str(out),
        d_model=32,
        n_heads=4,
        layers=2,
        d_ff=64,
        max_len=48,
        max_tokens=120,
        max_steps=12,
        warmup=4,
        threads=1,
        valid_every=6,
        save_every=6,
        dropout=0.1,
        seed=7,
    )
    base.update(kw)
    return TrainOptions(**base)


def test_bf16_joint_prenorm_run_learns_and_keeps_best_chrf(tmp_path):
    last = train(_opts(tmp_path / "r", joint_vocab=160, norm_first=True, precision="bf16", chrf_lines=10))
    ck = load_checkpoint(last, device="cpu")
    assert ck.config.share_src_tgt_embed and ck.config.norm_first
    assert ck.src_tokenizer.vocab_size == ck.tgt_tokenizer.vocab_size  # one vocabulary (>= its alphabet)
    # a Latin word gets the same pieces on both sides of a joint vocabulary
    assert ck.src_tokenizer.encode("Tom").ids == ck.tgt_tokenizer.encode("Tom").ids
    assert all(p.dtype == torch.float32 for p in ck.model.parameters())  # fp32 master weights
    best = load_checkpoint(tmp_path / "r" / "best", device="cpu")
    assert best.config == ck.config
    import json

    hist = [json.loads(x) for x in (tmp_path / "r" / "log.jsonl").read_text().splitlines()]
    assert hist[-1]["valid_nll"] < hist[0]["valid_nll"] and all("valid_chrf" in h for h in hist)


def test_init_from_warm_starts_with_the_checkpoint_weights(tmp_path):
    first = train(_opts(tmp_path / "a", max_steps=6))
    before = load_checkpoint(first, device="cpu").model.state_dict()
    second = train(_opts(tmp_path / "b", max_steps=1, init_from=str(first), warmup=100, dropout=0.2))
    ck = load_checkpoint(second, device="cpu")
    assert ck.config.dropout == 0.2
    # one step at a tiny warm-up learning rate: close to, but not equal to, the start weights
    after = ck.model.state_dict()
    diffs = [float((after[k] - before[k]).abs().max()) for k in before]
    assert 0 < max(diffs) < 1e-2


@pytest.mark.parametrize("native", [False, True])
def test_bf16_on_a_cpu_without_native_bf16_warns(tmp_path, monkeypatch, caplog, native):
    import core.training.train as train_mod

    monkeypatch.setattr(train_mod, "cpu_bf16_native", lambda: native)
    with caplog.at_level("WARNING", logger=train_mod.log.name):
        train(_opts(tmp_path / "r", precision="bf16", max_steps=1))
    warned = [r for r in caplog.records if "without AVX512-BF16 or AMX" in r.getMessage()]
    assert len(warned) == (0 if native else 1)


def test_cpu_capability_names_the_kernels_and_the_bf16_probe():
    from core.device import cpu_bf16_native, cpu_capability

    cap = cpu_capability()
    assert cap == "unknown" or cap.split("+")[0] == torch.backends.cpu.get_cpu_capability()
    assert cap.endswith("+BF16") == (cap != "unknown" and cpu_bf16_native())
