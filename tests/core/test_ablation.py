"""Head ablation: an ablated run equals a model whose W^O rows for that head (the
columns of ``w_o.weight``) are zeroed, built independently; the ablation is removed afterwards."""

from __future__ import annotations

import copy

import pytest
import torch

from core.transformer.ablation import ablated, attention_module
from core.transformer.attention import MultiHeadAttention


def zeroed_copy(model, spec):
    """Independent construction: a deep copy with head i's input block of W^O set to 0."""
    m = copy.deepcopy(model)
    for kind, layer, head in spec:
        blk = (m.encoder_layers if kind == "enc" else m.decoder_layers)[layer]
        mha = blk.cross_attn if kind == "cross" else blk.self_attn
        d = mha.d_head
        with torch.no_grad():
            mha.w_o.weight[:, head * d : (head + 1) * d] = 0.0  # nn.Linear stores W^O transposed
    return m


def run(model, src, tgt, need_weights):
    enc = model.encode(src, need_weights=need_weights)
    return model.decode(tgt, enc.memory, enc.src_key_padding_mask, need_weights=need_weights)


@pytest.mark.parametrize("spec", [[("enc", 1, 2)], [("dec", 0, 1), ("dec", 0, 3)], [("cross", 1, 0), ("enc", 0, 3)]])
@pytest.mark.parametrize("need_weights", [False, True])
def test_ablated_run_equals_zeroed_w_o_and_is_removed(tiny_model, spec, need_weights):
    torch.manual_seed(3)
    src = torch.randint(4, 40, (2, 7))
    src[1, 5:] = tiny_model.config.pad_id
    tgt = torch.randint(4, 36, (2, 5))
    base = run(tiny_model, src, tgt, need_weights).logits
    ref = run(zeroed_copy(tiny_model, spec), src, tgt, need_weights).logits
    assert not torch.allclose(base, ref, atol=1e-4)  # the head mattered
    with ablated(tiny_model, spec):
        got = run(tiny_model, src, tgt, need_weights).logits
    assert torch.allclose(got, ref, atol=1e-5)
    assert torch.equal(run(tiny_model, src, tgt, need_weights).logits, base)
    assert all("ablated_heads" not in m.__dict__ for m in tiny_model.modules() if isinstance(m, MultiHeadAttention))


def test_ablation_with_kv_cache_equals_zeroed_model(tiny_model):
    spec = [("dec", 1, 2), ("cross", 0, 1)]
    src = torch.randint(4, 40, (1, 6))
    ref = zeroed_copy(tiny_model, spec)
    with ablated(tiny_model, spec):
        enc = tiny_model.encode(src)
        enc_r = ref.encode(src)
        ys = torch.tensor([[tiny_model.config.bos_id]])
        cache = cache_r = None
        for _ in range(4):
            out = tiny_model.decode(ys[:, -1:], enc.memory, enc.src_key_padding_mask, cache=cache)
            out_r = ref.decode(ys[:, -1:], enc_r.memory, enc_r.src_key_padding_mask, cache=cache_r)
            cache, cache_r = out.cache, out_r.cache
            assert torch.allclose(out.logits, out_r.logits, atol=1e-5)
            ys = torch.cat([ys, out.logits[:, -1].argmax(-1, keepdim=True)], 1)


def test_bad_spec_is_rejected_before_anything_changes(tiny_model):
    with pytest.raises(ValueError, match="head 5 out of range"):
        with ablated(tiny_model, [("enc", 0, 1), ("enc", 0, 4)]):
            pass
    with pytest.raises(ValueError, match="layer 3 out of range"):
        with ablated(tiny_model, [("cross", 2, 0)]):
            pass
    with pytest.raises(ValueError, match="unknown attention kind"):
        with ablated(tiny_model, [("self", 0, 0)]):
            pass
    assert attention_module(tiny_model, "enc", 0).ablated_heads == ()
    with pytest.raises(RuntimeError):
        with ablated(tiny_model, [("enc", 0, 1)]):
            assert attention_module(tiny_model, "enc", 0).ablated_heads == (1,)
            raise RuntimeError("boom")
    assert attention_module(tiny_model, "enc", 0).ablated_heads == ()
