"""The decoder's key/value cache (core/transformer/kv_cache.py): appending writes into storage
allocated ahead instead of concatenating, gives exactly the concatenated values, and never changes
what another cache (an earlier step, a step back, a branch) holds; decoding with it is
bit-identical to concatenating at every step."""

from __future__ import annotations

import torch

from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.live import branch
from core.decoding.session import DecodeSession
from core.decoding.translate import translate
from core.transformer.kv_cache import MIN_CAPACITY, LayerCache

SENTENCES = ["집에 누군가 있어?", "제발 앉아.", "그는 매일 아침 공원에서 달린다."]


def positions(g, n, b=2, h=3, d=4):
    return torch.randn(b, h, n, d, generator=g), torch.randn(b, h, n, d, generator=g)


def test_append_equals_concatenation_and_reuses_its_storage():
    g = torch.Generator().manual_seed(0)
    k0, v0 = positions(g, 3)
    cross = torch.zeros(2, 3, 5, 4)
    cache, ks, vs = LayerCache(k0, v0, cross, cross), [k0], [v0]
    ptrs = set()
    for _ in range(40):
        k, v = positions(g, 1)
        cache = cache.append(k, v)
        ks.append(k)
        vs.append(v)
        assert torch.equal(cache.self_k, torch.cat(ks, 2)) and torch.equal(cache.self_v, torch.cat(vs, 2))
        ptrs.add(cache.self_k.data_ptr())
    assert cache.self_k.shape == (2, 3, 43, 4) and cache.cross_k is cross
    # 43 positions in storage of 16, then 2 × 17 = 34, then 2 × 35 = 70 positions (twice what was
    # needed when full): three allocations, not 40
    assert len(ptrs) == 3 and cache._storage.k.size(2) == 70 and MIN_CAPACITY == 16


def test_no_cache_ever_sees_another_write_its_positions():
    g = torch.Generator().manual_seed(1)
    k0, v0 = positions(g, 2)
    base = LayerCache(k0, v0, k0, v0).append(*positions(g, 1))  # in storage now
    kept = base.self_k.clone()
    a_k, a_v = positions(g, 1)
    b_k, b_v = positions(g, 1)
    a = base.append(a_k, a_v)  # the newest: written in place
    b = base.append(b_k, b_v)  # a branch from the same cache steps too: new storage, a untouched
    assert torch.equal(a.self_k[:, :, 3:], a_k) and torch.equal(b.self_k[:, :, 3:], b_k)
    assert a.self_k.data_ptr() == base.self_k.data_ptr() != b.self_k.data_ptr()
    back = a.truncate(2).append(b_k, b_v)  # a step back, then another token: a keeps its position 2
    assert torch.equal(a.self_k[:, :, :3], kept) and torch.equal(a.self_k[:, :, 3:], a_k)
    assert torch.equal(back.self_k, torch.cat([kept[:, :, :2], b_k], 2))
    assert torch.equal(base.self_k, kept)


def test_a_cache_built_in_inference_mode_appends_outside_it():
    g = torch.Generator().manual_seed(2)
    with torch.inference_mode():
        c = LayerCache(*positions(g, 2), *positions(g, 2)).append(*positions(g, 1))
    k, v = positions(g, 1)
    with torch.no_grad():
        d = c.append(k, v)  # the inference-mode storage cannot be written here: copied instead
    assert not d.self_k.is_inference() and torch.equal(d.self_k, torch.cat([c.self_k, k], 2))


def test_gradients_flow_through_appended_steps():
    g = torch.Generator().manual_seed(3)
    k0, v0 = (x.requires_grad_() for x in positions(g, 2))
    c = LayerCache(k0, v0, k0, v0)
    q = torch.randn(2, 3, 1, 4, generator=g)
    total = 0
    for _ in range(3):
        k, v = (x.requires_grad_() for x in positions(g, 1))
        c = c.append(k, v)
        total = total + ((q @ c.self_k.transpose(-2, -1)).softmax(-1) @ c.self_v).sum()
    total.backward()  # writing into shared storage would have failed here ("modified by an inplace operation")
    assert k0.grad is not None and k.grad is not None and k0.grad.abs().sum() > 0


def _cat_append(self, k_new, v_new):
    """What a step did before: concatenate the earlier positions with the new one."""
    return LayerCache(torch.cat([self.self_k, k_new], 2), torch.cat([self.self_v, v_new], 2), self.cross_k, self.cross_v)


def test_decoding_bit_identical_to_concatenating_at_every_step(tiny_checkpoint, monkeypatch):
    ck = load_checkpoint(tiny_checkpoint, device="cpu")

    def run():
        out = []
        for text in SENTENCES:
            s = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, text, pad_to=30)
            for _ in range(3):
                s.step()
            other = branch(s)  # steps on its own from the same caches
            other.run()
            s.back()
            s.step(force=5)  # a different token where the branch had its own
            s.run()
            for session in (s, other):
                m = session.maps()
                out += [m.decoder_self, m.cross, torch.stack([st.logits for st in session.steps])]
        out.append(translate(ck, SENTENCES[0], beam=3).maps.cross)
        return out

    new = run()
    monkeypatch.setattr(LayerCache, "append", _cat_append)
    old = run()
    assert len(new) == len(old) == 3 * 2 * len(SENTENCES) + 1
    for a, b in zip(new, old):
        assert a.shape == b.shape and torch.equal(a, b)
