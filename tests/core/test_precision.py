"""Inference precision (core/checkpoints/precision.py) and the inference fast path of attention.

Every precision returns float32, finite, normalised attention (rows sum to 1 over the keys the
model could see, exact 0 on masked keys) and, on the tiny fixture model, fp32's tokens; fp32 with
the stacked projection weights kept between steps is bit-identical to concatenating them at every
step, as the code did before. Speed is measured by ``python -m bench.precision``, never here.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from core.__main__ import main as cli
from core.checkpoints.checkpoint import load_checkpoint, to_precision
from core.checkpoints.precision import (
    PRECISIONS,
    REFINE_TOP,
    BF16Linear,
    PackedLinear,
    RefinedLogits,
    convert_model,
    model_precision,
    packed_bf16_available,
)
from core.decoding.batch import translate_batch
from core.decoding.session import DecodeSession
from core.decoding.translate import translate
from core.transformer.attention import MultiHeadAttention, scaled_dot_product, stack_rows

SENTENCES = ["집에 누군가 있어?", "제발 앉아.", "외로워.", "그는 매일 아침 공원에서 달린다."]


@pytest.fixture(scope="module")
def checkpoints(tiny_checkpoint):
    return {p: load_checkpoint(tiny_checkpoint, device="cpu", precision=p) for p in PRECISIONS}


def assert_normalised(weights: torch.Tensor, masked: torch.Tensor) -> None:
    """``weights [..., K]`` float32, finite; exact 0 where ``masked`` (broadcast, True = masked);
    each row sums to 1 over the other keys."""
    assert weights.dtype == torch.float32
    assert bool(weights.isfinite().all())
    masked = masked.expand_as(weights)
    assert bool((weights[masked] == 0).all())
    torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]), atol=1e-5, rtol=0)
    assert bool((weights >= 0).all())


@pytest.mark.parametrize("precision", PRECISIONS)
def test_precision_maps_are_float32_finite_and_normalised(checkpoints, precision):
    ck = checkpoints[precision]
    assert ck.precision == precision and model_precision(ck.model) == precision
    for text in SENTENCES[1:3]:
        r = translate(ck, text, pad_to=40)  # source padding: masked encoder and cross keys
        m = r.maps
        pad = m.src_key_padding_mask
        assert bool(pad.any())
        n = m.decoder_self.size(-1)
        assert_normalised(m.encoder_self, pad)
        assert_normalised(m.cross, pad)
        assert_normalised(m.decoder_self, torch.ones(n, n, dtype=torch.bool).triu(1))
        tf = translate(ck, text, reference="I am here.", pad_to=40).maps  # the model's own causal mask
        t = tf.decoder_self.size(-1)
        assert_normalised(tf.decoder_self, tf.causal_mask)
        assert tf.causal_mask.shape == (t, t) and bool(tf.causal_mask.any())
        assert_normalised(tf.cross, tf.src_key_padding_mask)


@pytest.mark.parametrize("precision", PRECISIONS)
def test_precision_batch_maps_normalised_with_padding_on_both_sides(checkpoints, precision):
    results = translate_batch(checkpoints[precision], SENTENCES[:3])
    for r in results:
        m = r.maps
        n = m.decoder_self.size(-1)
        real = ~m.tgt_key_padding_mask  # pad query rows are zeroed by design; check the real rows
        assert_normalised(m.cross[:, :, real], m.src_key_padding_mask)
        dec_masked = torch.ones(n, n, dtype=torch.bool).triu(1) | m.tgt_key_padding_mask
        assert_normalised(m.decoder_self[:, :, real], dec_masked[real])


@pytest.mark.parametrize("precision", [p for p in PRECISIONS if p != "fp32"])
def test_precision_gives_fp32_tokens_on_tiny_model(checkpoints, precision):
    for text in SENTENCES:
        ref = translate(checkpoints["fp32"], text)
        got = translate(checkpoints[precision], text)
        assert [s.token_id for s in got.steps] == [s.token_id for s in ref.steps]
        # the maps are an approximation of fp32's, never something else
        assert (got.maps.cross - ref.maps.cross).abs().max() < 0.05


def test_beam_search_runs_at_every_precision(checkpoints):
    ref = translate(checkpoints["fp32"], SENTENCES[2], beam=2)
    for p in ("bf16", "int8"):
        assert translate(checkpoints[p], SENTENCES[2], beam=2).translation == ref.translation


def _old_stacked(self, names, keep=False):
    """What project_qkv/project_kv did before: concatenate the matrices at every call (in the
    layout the kept copy has, so only the keeping differs)."""
    mods = [getattr(self, n) for n in names]
    return stack_rows([m.weight for m in mods]), torch.cat([m.bias for m in mods])


def test_fp32_decoding_bit_identical_to_per_step_concatenation(checkpoints, monkeypatch):
    ck = checkpoints["fp32"]

    def run():
        out = []
        for text in SENTENCES:
            s = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, text, pad_to=40)
            s.run()
            s.back()
            s.step()
            m = s.maps()
            out += [m.encoder_self, m.decoder_self, m.cross, torch.stack([st.logits for st in s.steps])]
        out += [translate(ck, SENTENCES[1], beam=3).maps.cross, translate(ck, SENTENCES[2], reference="Sit.").maps.cross]
        return out

    new = run()
    assert any("_stacked_cache" in m.__dict__ for m in ck.model.modules())  # the fast path was taken
    monkeypatch.setattr(MultiHeadAttention, "_stacked", _old_stacked)
    old = run()
    assert len(new) == len(old)
    for a, b in zip(new, old):
        assert a.shape == b.shape and torch.equal(a, b)


def test_scaled_dot_product_fp32_bit_identical_to_eq1_as_written():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 4, 5, 8, generator=g) for _ in range(3))
    mask = torch.zeros(2, 1, 5, 5, dtype=torch.bool)
    mask[1, ..., 3:] = True
    out, w = scaled_dot_product(q, k, v, mask)
    scores = (q @ k.transpose(-2, -1) / math.sqrt(8)).masked_fill(mask, torch.finfo(torch.float32).min)
    w_ref = scores.softmax(-1).masked_fill(mask, 0.0)
    assert torch.equal(w, w_ref) and torch.equal(out, w_ref @ v)


def test_bf16_attention_runs_in_float32_and_returns_the_weights_used():
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(1, 2, 3, 8, generator=g).bfloat16() for _ in range(3))
    out, w = scaled_dot_product(q, k, v)
    assert w.dtype == torch.float32 and out.dtype == torch.bfloat16
    assert torch.equal(out, (w @ v.float()).bfloat16())  # exactly these weights multiplied V


def test_stacked_weights_follow_in_place_edits_and_training():
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 2).eval()
    x = torch.randn(1, 1, 16)  # one position: a decoding step, where the stacked copy is kept
    with torch.inference_mode():
        a = mha.project_qkv(x)[0]
        assert "_stacked_cache" in mha.__dict__
        assert torch.equal(mha.project_qkv(x)[0], a)  # reused: same values
    with torch.no_grad():
        mha.w_q.weight.add_(1.0)  # an edit bumps the version: the stacked copy is rebuilt
    with torch.inference_mode():
        b = mha.project_qkv(x)[0]
    assert not torch.equal(a, b)
    torch.testing.assert_close(b, mha._split(mha.w_q(x)), atol=1e-6, rtol=0)
    mha.train()
    mha.project_qkv(x)[0].sum().backward()  # with gradients on, no stacked copy: gradients flow
    assert mha.w_q.weight.grad is not None and mha.w_q.weight.grad.abs().sum() > 0


def test_projection_matrices_readable_at_every_precision(checkpoints):
    shapes = {}
    for p, ck in checkpoints.items():
        attn = ck.model.decoder_layers[0].self_attn
        shapes[p] = [tuple(w.shape) for w in (attn.W_Q, attn.W_K, attn.W_V, attn.W_O)]
        if p != "fp32":
            torch.testing.assert_close(
                attn.W_Q.float(), checkpoints["fp32"].model.decoder_layers[0].self_attn.W_Q, atol=0.05, rtol=0.05
            )
    assert len(set(map(tuple, shapes.values()))) == 1


def test_bad_precision_and_double_conversion_refused(tiny_checkpoint, tmp_path):
    with pytest.raises(ValueError, match="unknown precision"):
        load_checkpoint(tmp_path / "nowhere", device="cpu", precision="fp16")  # before any file is read
    ck = load_checkpoint(tiny_checkpoint, device="cpu", precision="bf16")
    assert to_precision(ck, "bf16") is ck  # same precision: nothing to do
    with pytest.raises(ValueError, match="already converted to bf16"):
        to_precision(ck, "int8")
    fp = load_checkpoint(tiny_checkpoint, device="cpu")
    to_precision(fp, "int8")
    assert fp.precision == "int8" and translate(fp, SENTENCES[0]).translation


def test_packed_bf16_linear_equals_plain_bf16_linear():
    if not packed_bf16_available():
        pytest.skip("no oneDNN bfloat16 on this CPU: bf16 uses plain nn.Linear")
    torch.manual_seed(0)
    lin = nn.Linear(24, 40).to(torch.bfloat16)
    x = torch.randn(3, 5, 24).bfloat16()
    with torch.inference_mode():
        torch.testing.assert_close(PackedLinear(lin)(x).float(), lin(x).float(), atol=1e-2, rtol=1e-2)
    assert torch.equal(PackedLinear(lin).weight(), lin.weight.detach())
    model = nn.Sequential(nn.Linear(4, 4))
    convert_model(model, "bf16")
    assert isinstance(model[0], PackedLinear) and model_precision(model) == "bf16"


@pytest.mark.parametrize("precision", PRECISIONS)
def test_cli_translate_precision(tiny_checkpoint, capsys, precision):
    assert (
        cli(["translate", SENTENCES[1], "--checkpoint", str(tiny_checkpoint), "--device", "cpu", "--precision", precision]) == 0
    )
    assert capsys.readouterr().out.strip()


def test_cli_rejects_unknown_precision(tiny_checkpoint, capsys):
    with pytest.raises(SystemExit):
        cli(["translate", SENTENCES[1], "--checkpoint", str(tiny_checkpoint), "--precision", "fp16"])
    assert "invalid choice" in capsys.readouterr().err


def test_bf16_rounds_only_the_products_and_keeps_the_stream_float32(checkpoints):
    """bf16: every linear layer holds a bfloat16 weight and returns float32; embeddings, LayerNorms and
    the residual stream (the encoder's memory, the logits) stay float32, as the fp32 model's."""
    ck, ref = checkpoints["bf16"], checkpoints["fp32"]
    linears = [m for m in ck.model.modules() if isinstance(m, BF16Linear)]
    assert linears and not any(isinstance(m, nn.Linear) for m in ck.model.modules())
    assert all(p.dtype == torch.float32 for p in ck.model.parameters())  # embeddings, LayerNorms
    lin = linears[0]
    x = torch.randn(2, 3, lin.in_features)
    with torch.inference_mode():
        y = lin(x)
        expected = torch.nn.functional.linear(x.bfloat16(), lin.weight(), lin.bias).float()
    assert y.dtype == torch.float32
    torch.testing.assert_close(y, expected, atol=1e-2, rtol=1e-2)
    s = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, SENTENCES[3])
    s.run()
    assert s.steps[0].logits.dtype == torch.float32 and bool(s.steps[0].logits.isfinite().all())
    r = DecodeSession(ref.model, ref.src_tokenizer, ref.tgt_tokenizer, SENTENCES[3])
    r.run()
    assert s.output_ids == r.output_ids
    assert (s.steps[0].logits - r.steps[0].logits).abs().max() < 0.1  # rounded products, not another model


@pytest.mark.parametrize("precision", ["bf16", "int8"])
def test_rounded_output_projection_scores_its_best_candidates_in_float32(checkpoints, precision):
    """At bf16 and int8 the output projection is a RefinedLogits: the REFINE_TOP best scores per
    position equal the float32 product exactly (same weight, float32 arithmetic); every other score
    is the rounded product's; a bias the model adds afterwards is counted in the ranking."""
    ck, ref = checkpoints[precision], checkpoints["fp32"]
    gen = ck.model.generator
    assert isinstance(gen, RefinedLogits) and gen.k == REFINE_TOP
    if precision == "bf16":
        assert isinstance(gen.product, BF16Linear)
    else:  # a dynamically quantized linear: int8 weights
        assert gen.product.weight().dtype == torch.qint8
    w = ref.model.generator.weight.detach()  # [V, d_model] float32 (tied: the embedding table)
    torch.testing.assert_close(gen.exact_weight, w, atol=0, rtol=0)
    x = torch.randn(2, 5, gen.in_features)  # [B, T, d_model]
    with torch.inference_mode():
        out = gen(x)
        coarse = gen.product(x)
        full = x @ w.t()  # float32 reference [B, T, V]
    assert out.shape == (2, 5, gen.out_features) and out.dtype == torch.float32
    idx = coarse.topk(REFINE_TOP, dim=-1).indices
    refined = torch.zeros_like(out, dtype=torch.bool).scatter(-1, idx, True)
    torch.testing.assert_close(out[refined], full[refined], atol=1e-5, rtol=0)  # float32 values
    assert torch.equal(out[~refined], coarse[~refined])  # the rest untouched
    assert bool((full[refined] != coarse[refined]).any())  # bfloat16 / int8 did round them
    # a rank bias that makes token 3 best puts token 3 among the refined ones
    bias = torch.zeros(gen.out_features)
    bias[3] = 1e4
    biased = RefinedLogits(gen.product, w, rank_bias=bias)
    with torch.inference_mode():
        y = biased(x)
    torch.testing.assert_close(y[..., 3], full[..., 3], atol=1e-5, rtol=0)


def test_int8_output_keeps_every_layer_fp32_and_gives_fp32s_maps(checkpoints):
    """int8-output: only the output projection is int8 (a RefinedLogits over a quantized linear);
    every other linear is the fp32 model's own nn.Linear with equal weights, so with the same
    tokens forced, every attention map equals fp32's exactly."""
    ck, ref = checkpoints["int8-output"], checkpoints["fp32"]
    assert model_precision(ck.model) == "int8-output" and model_precision(checkpoints["int8"].model) == "int8"
    gen = ck.model.generator
    assert isinstance(gen, RefinedLogits) and gen.product.weight().dtype == torch.qint8
    ours = {n: m for n, m in ck.model.named_modules() if isinstance(m, torch.nn.Linear)}
    theirs = {n: m for n, m in ref.model.named_modules() if isinstance(m, torch.nn.Linear)}
    assert set(ours) == set(theirs) - {"generator"} and ours
    for name, lin in ours.items():
        assert torch.equal(lin.weight, theirs[name].weight) and lin.weight.stride() == theirs[name].weight.stride()
    src = torch.tensor([ref.src_tokenizer.encode(SENTENCES[3]).ids + [ref.config.eos_id]])
    tgt = torch.tensor([[ref.config.bos_id] + ref.tgt_tokenizer.encode("he runs in the park").ids])
    with torch.inference_mode():
        outs = []
        for model in (ck.model, ref.model):
            enc = model.encode(src, need_weights=True)
            dec = model.decode(tgt, enc.memory, enc.src_key_padding_mask, need_weights=True)
            outs.append((enc.self_attn, dec.self_attn, dec.cross_attn, dec.logits))
    for a, b in zip(outs[0][:3], outs[1][:3]):
        for wa, wb in zip(a, b):
            assert torch.equal(wa, wb)
    # the refined best candidates carry fp32's exact scores; the argmax is fp32's
    assert torch.equal(outs[0][3].argmax(-1), outs[1][3].argmax(-1))
