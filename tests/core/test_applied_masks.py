"""``core`` reports the masks the model was GIVEN (True = masked), not masks rebuilt for display.

Cached decoding gives a single new query no self mask at all (its future keys do not exist
yet); one parallel pass (teacher forcing) gives the causal mask; padding is given as key masks."""

from __future__ import annotations

import torch

from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.batch import translate_batch
from core.decoding.experiments import teacher_forced_pass
from core.decoding.session import DecodeSession
from core.decoding.translate import translate
from core.transformer.masks import causal_mask


def test_model_returns_the_mask_tensors_it_passed(tiny_model):
    src = torch.tensor([[5, 6, 7, 0, 0]])  # pad_id 0 at the end
    enc = tiny_model.encode(src)
    assert enc.attn_mask.shape == (1, 1, 1, 5) and enc.attn_mask[0, 0, 0].tolist() == [False] * 3 + [True] * 2
    assert tiny_model.encode(torch.tensor([[5, 6, 7]])).attn_mask is None  # nothing padded: unmasked
    tgt = torch.tensor([[1, 8, 9]])
    out = tiny_model.decode(tgt, enc.memory, enc.src_key_padding_mask)
    assert out.self_mask.shape == (1, 1, 3, 3) and torch.equal(out.self_mask[0, 0], causal_mask(3))
    assert torch.equal(out.cross_mask, enc.attn_mask)
    step = tiny_model.decode(tgt[:, :1], enc.memory, enc.src_key_padding_mask, cache=None)
    assert step.self_mask is None  # one query, no target padding: nothing to mask, none given
    cached = tiny_model.decode(tgt[:, 1:2], enc.memory, enc.src_key_padding_mask, cache=step.cache)
    assert cached.self_mask is None  # one new query on the cache: no mask given


def test_cached_session_reports_no_self_mask_and_the_padding_it_gave(tiny_checkpoint):
    ck = load_checkpoint(tiny_checkpoint, device="cpu")
    s = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, "집에 누군가 있어?", pad_to=12)
    s.run()
    m = s.maps()
    a = m.applied
    t, n_src = len(s.steps), len(s.source.ids)
    kpm = m.src_key_padding_mask
    assert kpm.any()
    assert torch.equal(a.encoder, kpm[None, :].expand(n_src, n_src))
    assert torch.equal(a.cross, kpm[None, :].expand(t, n_src)) and a.cross_given.all()
    # every step is one new query on the cache: no self mask given at all
    assert a.decoder_self_given.tolist() == [False] * t
    assert not a.decoder_self.any()
    assert torch.equal(a.decoder_keys, ~causal_mask(t))  # key j existed for query t only if j <= t
    k = 3
    sub = m.truncated(k).applied
    assert sub.decoder_self.shape == (k, k) and sub.cross.shape == (k, n_src)


def test_teacher_forcing_reports_the_causal_mask_and_its_absence(tiny_checkpoint):
    ck = load_checkpoint(tiny_checkpoint, device="cpu")
    s = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, "집에 누군가 있어?")
    ids = [ck.model.config.start_id, 5, 6, 7]
    on = teacher_forced_pass(s, ids, ["a"] * 4).maps.applied
    assert torch.equal(on.decoder_self, causal_mask(4)) and on.decoder_self_given.all() and on.decoder_keys.all()
    assert on.encoder is None and not on.cross_given.any()  # nothing padded: attention ran unmasked
    off = teacher_forced_pass(s, ids, ["a"] * 4, causal=False).maps.applied
    assert not off.decoder_self_given.any() and not off.decoder_self.any()
    r = translate(ck, "집에 누군가 있어?", reference="someone is at home")
    assert torch.equal(r.maps.applied.decoder_self, causal_mask(len(r.maps.tgt_tokens)))


def test_batch_reports_target_padding_given_to_the_shorter_sentence(tiny_checkpoint):
    ck = load_checkpoint(tiny_checkpoint, device="cpu")
    long, short = translate_batch(ck, ["집에 누군가 있어? 집에 누군가 있어?", "외로워."])
    for r in (long, short):
        a, tkpm = r.maps.applied, r.maps.tgt_key_padding_mask
        t = tkpm.numel()
        assert a.decoder_self.shape == (t, t)
        # row k was given the key padding of keys 0..k (pad keys masked), nothing else
        for k in range(t):
            assert a.decoder_self[k, : k + 1].tolist() == tkpm[: k + 1].tolist()
        assert torch.equal(a.cross[0], r.maps.src_key_padding_mask)


def test_json_reports_the_applied_masks(tiny_checkpoint):
    ck = load_checkpoint(tiny_checkpoint, device="cpu")
    r = translate(ck, "집에 누군가 있어?", pad_to=12)
    applied = r.to_json()["masks"]["applied"]
    t = len(r.maps.tgt_tokens)
    assert applied["decoder_self_given"] == [False] * t  # cached decoding: no self mask given
    assert applied["decoder_keys"] == (~causal_mask(t)).tolist()
    assert applied["encoder"] == r.maps.src_key_padding_mask.tolist() and any(applied["encoder"])
    tf = translate(ck, "집에 누군가 있어?", reference="someone is at home").to_json()["masks"]["applied"]
    assert tf["decoder_self"] == causal_mask(len(tf["decoder_self"])).tolist() and all(tf["decoder_self_given"])
