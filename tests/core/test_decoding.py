"""Step-by-step decoding engine: cache == recompute, back(), beam, padding demo, batch == single."""

from __future__ import annotations

import pytest
import torch

from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.beam import beam_search, sequence_score
from core.decoding.session import DecodeSession, greedy_batch, teacher_forced
from core.decoding.translate import translate
from core.errors import InputError

SENTENCES = ["집에 누군가 있어?", "제발 앉아.", "외로워."]


@pytest.fixture(scope="module")
def ck(tiny_checkpoint):
    return load_checkpoint(tiny_checkpoint, device="cpu")


def run_session(ck, text, **kw):
    s = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, text, **kw)
    s.run()
    return s


@pytest.mark.parametrize("text", SENTENCES)
def test_cached_steps_equal_teacher_forced_recompute(ck, text):
    s = run_session(ck, text)
    m = s.maps()
    n = len(s.steps)
    assert n >= 1 and m.decoder_self.shape == (2, 4, n, n) and m.cross.shape == (2, 4, n, len(s.source.ids))
    tf = teacher_forced(ck.model, s.source.ids, [1] + s.output_ids[:-1], m.src_tokens, m.tgt_tokens)
    torch.testing.assert_close(m.decoder_self, tf.maps.decoder_self, atol=1e-5, rtol=0)
    torch.testing.assert_close(m.cross, tf.maps.cross, atol=1e-5, rtol=0)
    torch.testing.assert_close(m.encoder_self, tf.maps.encoder_self, atol=1e-5, rtol=0)
    torch.testing.assert_close(torch.stack([st.logits for st in s.steps]), tf.logits, atol=1e-5, rtol=0)
    assert (m.decoder_self[:, :, m.causal_mask] == 0).all()


def test_cache_gives_same_tokens_as_full_recompute(ck):
    s = run_session(ck, SENTENCES[0])
    model = ck.model
    src = torch.tensor([s.source.ids])
    tokens = [1]
    with torch.no_grad():
        enc = model.encode(src)
        for _ in range(len(s.steps)):
            logits = model.decode(torch.tensor([tokens]), enc.memory, enc.src_key_padding_mask).logits
            tokens.append(int(logits[0, -1].argmax()))
    assert tokens[1:] == s.output_ids


def test_back_restores_previous_state_without_drift(ck):
    s = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, SENTENCES[1])
    first = [s.step() for _ in range(3)]
    s.back()
    s.back()
    assert len(s.steps) == 1
    again = [s.step(), s.step()]
    for a, b in zip(first[1:], again):
        assert a.token_id == b.token_id
        torch.testing.assert_close(a.self_attn, b.self_attn)
        torch.testing.assert_close(a.logits, b.logits)
    s.back(), s.back(), s.back(), s.back()
    assert s.steps == [] and s.maps().decoder_self.shape[2] == 0


def test_top_k_sorted_and_probabilities(ck):
    s = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, SENTENCES[0], top_k=5)
    st = s.step()
    probs = [p for _, _, p in st.top_k]
    assert len(probs) == 5 and probs == sorted(probs, reverse=True)
    full = st.logits.softmax(-1)
    assert abs(probs[0] - float(full.max())) < 1e-6 and st.token_id == int(full.argmax())


def test_beam_one_equals_greedy_and_beam_k_scores_at_least_greedy(ck):
    for text in SENTENCES:
        greedy = run_session(ck, text)
        ids = greedy.output_ids[:-1] if not greedy.truncated else greedy.output_ids
        b1 = beam_search(ck.model, ck.src_tokenizer, text, beam=1)[0]
        assert b1.ids == ids and b1.truncated == greedy.truncated
        g_score = sequence_score(ck.model, greedy.source.ids, ids, 0.6, eos=not greedy.truncated)
        assert abs(b1.score - g_score) < 1e-4
        b4 = beam_search(ck.model, ck.src_tokenizer, text, beam=4)
        assert b4[0].score >= g_score - 1e-5 or greedy.truncated
        assert len({tuple(h.ids) for h in b4}) == len(b4)  # n-best without duplicates
        assert all(ck.model.config.eos_id not in h.ids for h in b4)
        assert [h.score for h in b4] == sorted((h.score for h in b4), reverse=True)


def test_pad_to_changes_nothing_but_adds_exact_zero_columns(ck):
    plain = translate(ck, SENTENCES[0])
    padded = translate(ck, SENTENCES[0], pad_to=32)
    s = len(plain.source.ids)
    assert padded.translation == plain.translation
    assert len(padded.maps.src_tokens) == 32 and padded.maps.src_tokens[s:] == ["[PAD]"] * (32 - s)
    assert padded.maps.src_key_padding_mask.tolist() == [False] * s + [True] * (32 - s)
    assert (padded.maps.cross[..., s:] == 0).all() and (padded.maps.encoder_self[..., s:] == 0).all()
    torch.testing.assert_close(padded.maps.cross[..., :s], plain.maps.cross, atol=1e-5, rtol=0)
    torch.testing.assert_close(padded.maps.decoder_self, plain.maps.decoder_self, atol=1e-5, rtol=0)
    torch.testing.assert_close(padded.maps.encoder_self[..., :s, :s], plain.maps.encoder_self, atol=1e-5, rtol=0)


def test_batch_equals_single(ck):
    batch = greedy_batch(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, SENTENCES)
    for text, ids in zip(SENTENCES, batch):
        single = run_session(ck, text)
        expect = single.output_ids if single.truncated else single.output_ids[:-1]
        assert ids == expect


def test_teacher_forced_reference_view(ck):
    r = translate(ck, SENTENCES[0], reference="Is anybody home?")
    ref_ids = ck.tgt_tokenizer.encode("Is anybody home?").ids
    t = len(ref_ids) + 1
    assert r.mode == "teacher_forced" and r.maps.tgt_tokens[0] == "[BOS]" and len(r.maps.tgt_tokens) == t
    assert r.maps.decoder_self.shape[-2:] == (t, t) and r.maps.cross.shape[-2] == t
    assert [s.token_id for s in r.steps] == ref_ids + [2]


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_empty_input_is_a_clear_error(ck, text):
    with pytest.raises(InputError, match="empty"):
        translate(ck, text)


def test_overlong_input_is_truncated_with_notice(ck):
    r = translate(ck, "가나다라마바사 " * 100)
    assert "only the first" in r.notice and len(r.source.ids) == ck.config.max_len


class Scripted:
    """Wraps a model's decode so the next-token distribution follows a script: at step t the
    log-probabilities are ``script(t)`` (a dict id -> probability; the rest share what is left)."""

    def __init__(self, model, script):
        self.model, self.script, self.config = model, script, model.config

    def parameters(self):
        return self.model.parameters()

    def encode(self, *a, **k):
        return self.model.encode(*a, **k)

    def decode(self, tgt, memory, kpm, tgt_kpm=None, need_weights=False, cache=None):
        out = self.model.decode(tgt, memory, kpm, tgt_kpm, need_weights=need_weights, cache=cache)
        t = out.cache[0].self_k.size(2) - 1  # position of the new token
        v = out.logits.size(-1)
        logits = torch.full_like(out.logits, -30.0)
        for row in range(out.logits.size(0)):
            prev = int(tgt[row, -1])
            probs = self.script(t, prev)
            rest = (1.0 - sum(probs.values())) / (v - len(probs))
            row_p = torch.full((v,), rest)
            for i, p in probs.items():
                row_p[i] = p
            logits[row, -1] = row_p.log()
        out.logits = logits
        return out


def test_beam_one_is_greedy_when_eos_is_top(ck):
    eos, a = 2, 10

    def script(t, prev):  # EOS is the top choice at once; the runner-up would continue
        return {eos: 0.5, a: 0.4} if t == 0 else {eos: 0.99}

    model = Scripted(ck.model, script)
    greedy = DecodeSession(model, ck.src_tokenizer, ck.tgt_tokenizer, SENTENCES[0])
    greedy.run()
    assert greedy.output_ids == [eos]
    b1 = beam_search(model, ck.src_tokenizer, SENTENCES[0], beam=1, alpha=0.0)
    assert [h.ids for h in b1] == [[]] and not b1[0].truncated
    assert abs(b1[0].logprob - float(torch.tensor(0.5).log())) < 1e-4


def test_beam_finds_a_better_sequence_than_greedy_and_stops(ck):
    eos, a, b = 2, 10, 11

    def script(t, prev):
        if t == 0:
            return {b: 0.5, a: 0.45}  # greedy takes b ...
        if prev == a:
            return {eos: 0.99}  # ... but a, EOS has probability 0.4455
        return {eos: 0.45, 12: 0.3}  # b, EOS only 0.225

    model = Scripted(ck.model, script)
    greedy = DecodeSession(model, ck.src_tokenizer, ck.tgt_tokenizer, SENTENCES[0])
    greedy.run()
    assert greedy.output_ids == [b, eos]
    hyps = beam_search(model, ck.src_tokenizer, SENTENCES[0], beam=2, alpha=0.0)
    assert hyps[0].ids == [a] and not hyps[0].truncated
    assert abs(hyps[0].logprob - float(torch.tensor(0.45 * 0.99).log())) < 1e-4
    g_score = float(torch.tensor(0.5 * 0.45).log())
    assert hyps[0].score > g_score
    assert [h.ids for h in hyps] == [[a], [b]]  # n-best, distinct, each ended by one EOS
