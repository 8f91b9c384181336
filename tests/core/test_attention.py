"""Attention and model correctness: parity with torch.nn.Transformer, explicit == SDPA,
mask semantics, and the five bugs of the tutorial code this project grew from."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from core.training.train import loss_fn
from core.transformer.attention import MultiHeadAttention, scaled_dot_product
from core.transformer.masks import causal_mask, key_padding_mask
from core.transformer.model import Transformer
from tests.support import tiny_config


def padded_batch(cfg, pad_src=(0, 3), pad_tgt=(0, 2)):
    g = torch.Generator().manual_seed(3)
    src = torch.randint(4, cfg.src_vocab_size, (2, 7), generator=g)
    tgt = torch.randint(4, cfg.tgt_vocab_size, (2, 5), generator=g)
    for b, n in enumerate(pad_src):
        if n:
            src[b, -n:] = cfg.pad_id
    for b, n in enumerate(pad_tgt):
        if n:
            tgt[b, -n:] = cfg.pad_id
    return src, tgt


def copy_into_torch(ours: Transformer, ref: nn.Transformer) -> None:
    def mha(dst: nn.MultiheadAttention, src: MultiHeadAttention):
        dst.in_proj_weight.copy_(torch.cat([src.w_q.weight, src.w_k.weight, src.w_v.weight]))
        dst.in_proj_bias.copy_(torch.cat([src.w_q.bias, src.w_k.bias, src.w_v.bias]))
        dst.out_proj.weight.copy_(src.w_o.weight)
        dst.out_proj.bias.copy_(src.w_o.bias)

    def common(dst, src, norms):
        dst.linear1.load_state_dict(src.ff.linear1.state_dict())
        dst.linear2.load_state_dict(src.ff.linear2.state_dict())
        for n in norms:
            getattr(dst, n).load_state_dict(getattr(src, n).state_dict())

    with torch.no_grad():
        for d, s in zip(ref.encoder.layers, ours.encoder_layers):
            mha(d.self_attn, s.self_attn)
            common(d, s, ("norm1", "norm2"))
        for d, s in zip(ref.decoder.layers, ours.decoder_layers):
            mha(d.self_attn, s.self_attn)
            mha(d.multihead_attn, s.cross_attn)
            common(d, s, ("norm1", "norm2", "norm3"))


def reference_logits(ours, ref, src, tgt):
    """Logits ``[B, T, V]`` of ``ref`` (a torch.nn.Transformer holding our weights) on our embeddings
    and positions, with the same causal and key padding masks (True = masked): the independent
    computation our model must equal."""
    d = ours.config.d_model
    src_kpm, tgt_kpm = key_padding_mask(src, 0), key_padding_mask(tgt, 0)
    x_src = ours.src_pos(ours.src_embed(src) * math.sqrt(d))
    x_tgt = ours.tgt_pos(ours.tgt_embed(tgt) * math.sqrt(d))
    h = ref(
        x_src,
        x_tgt,
        tgt_mask=causal_mask(tgt.size(1)),
        src_key_padding_mask=src_kpm,
        tgt_key_padding_mask=tgt_kpm,
        memory_key_padding_mask=src_kpm,
    )
    return ours.generator(h)


def test_decoder_output_matches_torch_nn_transformer_on_padded_batch():
    cfg = tiny_config()
    torch.manual_seed(0)
    ours = Transformer(cfg).train()  # dropout is 0; train mode keeps torch off its nested fast path
    ref = nn.Transformer(
        cfg.d_model, cfg.n_heads, cfg.n_encoder_layers, cfg.n_decoder_layers, cfg.d_ff, dropout=0.0, batch_first=True
    )
    ref.encoder.norm = None  # the paper's post-LN stack has no extra final LayerNorm
    ref.decoder.norm = None
    copy_into_torch(ours, ref)
    src, tgt = padded_batch(cfg)
    expected = reference_logits(ours, ref, src, tgt)
    got = ours(src, tgt)
    assert got.shape == (2, 5, cfg.tgt_vocab_size)
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=0)


def test_explicit_weights_path_equals_sdpa_path(tiny_model):
    src, tgt = padded_batch(tiny_model.config)
    fast = tiny_model(src, tgt)
    enc = tiny_model.encode(src, need_weights=True)
    slow = tiny_model.decode(tgt, enc.memory, enc.src_key_padding_mask, key_padding_mask(tgt, 0), need_weights=True)
    torch.testing.assert_close(slow.logits, fast, atol=1e-5, rtol=0)
    assert len(slow.self_attn) == 2 and slow.self_attn[0].shape == (2, 4, 5, 5)
    assert slow.cross_attn[0].shape == (2, 4, 5, 7)
    assert enc.self_attn[0].shape == (2, 4, 7, 7)


def test_rows_sum_to_one_masked_cells_exact_zero_causal_upper_triangle_zero(tiny_model):
    src, tgt = padded_batch(tiny_model.config)
    enc = tiny_model.encode(src, need_weights=True)
    out = tiny_model.decode(tgt, enc.memory, enc.src_key_padding_mask, key_padding_mask(tgt, 0), need_weights=True)
    src_pad = src.eq(0)
    for w in enc.self_attn + out.cross_attn:
        torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1]), atol=1e-6, rtol=0)
        assert (w[1][..., src_pad[1]] == 0).all()  # pad *key columns* of sentence 1 exactly 0
        assert w[1][..., src_pad[1]].numel() > 0
    upper = causal_mask(5)
    for w in out.self_attn:
        assert (w[:, :, upper] == 0).all()
        assert (w[1][..., -2:][:, :3] == 0).all()  # target pad keys masked for real queries
        torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1]), atol=1e-6, rtol=0)


def test_fully_padded_sentence_gives_no_nan(tiny_model):
    src, tgt = padded_batch(tiny_model.config)
    src[1] = 0  # an entirely padded source sentence
    enc = tiny_model.encode(src, need_weights=True)
    out = tiny_model.decode(tgt, enc.memory, enc.src_key_padding_mask, key_padding_mask(tgt, 0), need_weights=True)
    fast = tiny_model(src, tgt)
    for t in [enc.memory, out.logits, fast, *enc.self_attn, *out.cross_attn]:
        assert torch.isfinite(t).all()
    assert (out.cross_attn[0][1] == 0).all()  # nothing to attend to: all-zero rows
    torch.testing.assert_close(out.logits, fast, atol=1e-5, rtol=0)


def test_bug_masked_fill_result_not_thrown_away():
    q = k = v = torch.randn(1, 1, 3, 4)
    mask = torch.tensor([False, False, True])[None, None, None, :]
    _, w = scaled_dot_product(q, k, v, mask)
    assert (w[..., 2] == 0).all()
    torch.testing.assert_close(w.sum(-1), torch.ones(1, 1, 3))


def test_bug_scores_scaled_by_sqrt_d_head():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 4, 16, generator=g) * 3 for _ in range(3))
    _, w = scaled_dot_product(q, k, v)
    expected = torch.softmax(q @ k.transpose(-1, -2) / 4.0, dim=-1)  # √16 = 4
    torch.testing.assert_close(w, expected)
    unscaled = torch.softmax(q @ k.transpose(-1, -2), dim=-1)
    assert not torch.allclose(w, unscaled, atol=1e-3)


def test_bug_padding_masks_key_columns_not_query_rows(tiny_model):
    src = torch.tensor([[5, 6, 7, 0, 0]])
    enc = tiny_model.encode(src, need_weights=True)
    w = enc.self_attn[0][0]  # [H, S, S]
    assert (w[:, :, 3:] == 0).all()  # pad keys get nothing
    torch.testing.assert_close(w[:, 3:].sum(-1), torch.ones(4, 2))  # pad query rows still attend
    assert (w[:, 3:, :3] > 0).all()


def test_bug_each_head_has_its_own_projection():
    torch.manual_seed(0)
    mha = MultiHeadAttention(32, 4).eval()
    x = torch.randn(1, 5, 32)
    _, w = mha(x, x, need_weights=True)
    assert not torch.allclose(w[0, 0], w[0, 1], atol=1e-4)  # heads differ
    with torch.no_grad():
        mha.w_q.weight[8:16] += 1.0  # rows of head 1 only
    _, w2 = mha(x, x, need_weights=True)
    torch.testing.assert_close(w2[0, 0], w[0, 0])  # head 0 untouched
    assert not torch.allclose(w2[0, 1], w[0, 1], atol=1e-4)
    assert mha.w_q.weight.shape == (32, 32)  # d_model × d_model = all heads' W_i^Q stacked


def test_bug_no_softmax_before_cross_entropy(tiny_model):
    src, tgt = padded_batch(tiny_model.config)
    with torch.no_grad():
        logits = tiny_model(src, tgt[:, :-1])
    assert (logits < 0).any() and not torch.allclose(logits.sum(-1), torch.ones(logits.shape[:-1]))
    target = tgt[:, 1:]
    manual = -logits.log_softmax(-1).gather(-1, target[..., None])[..., 0]
    keep = target.ne(0)
    expected = manual[keep].mean()
    torch.testing.assert_close(loss_fn(logits, target, 0, 0.0), expected)
    softmaxed_twice = F.cross_entropy(logits.softmax(-1).reshape(-1, logits.size(-1)), target.reshape(-1), ignore_index=0)
    assert abs(float(softmaxed_twice) - float(expected)) > 0.1


@pytest.mark.parametrize("positional", ["sinusoidal", "learned"])
def test_positional_kinds_and_max_len_error(positional):
    model = Transformer(tiny_config(positional=positional, max_len=8)).eval()
    assert model(torch.tensor([[5, 6]]), torch.tensor([[1, 7]])).shape == (1, 2, 36)
    with pytest.raises(ValueError, match="max_len"):
        model.encode(torch.full((1, 9), 5))


def test_a_pruned_projection_is_applied_as_computed_not_stacked():
    """A pruned W^Q (torch.nn.utils.prune: ``weight`` is computed from ``weight_orig`` and a mask, no
    longer a parameter of its own) is used as it is, one projection at a time: the same output as
    multiplying by the pruned matrix by hand."""
    from torch.nn.utils import prune

    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4).eval()
    prune.l1_unstructured(mha.w_q, "weight", amount=0.5)
    assert "weight" not in mha.w_q._parameters and int((mha.w_q.weight == 0).sum()) == 128
    x = torch.randn(2, 3, 16)
    with torch.inference_mode():
        out, w = mha(x, x, need_weights=True)
        q = (x @ mha.w_q.weight.t() + mha.w_q.bias).view(2, 3, 4, 4).transpose(1, 2)
        k = mha.w_k(x).view(2, 3, 4, 4).transpose(1, 2)
        expected = torch.softmax(q @ k.transpose(-2, -1) / 2.0, dim=-1)
    assert torch.allclose(w, expected, atol=1e-6)
