"""OPUS-MT (Marian) import: our own Transformer reproduces a Hugging Face MarianMTModel.

Tiny random models, built offline (tests/support/marian.py); compared with transformers'
own forward pass, ``generate`` and ``output_attentions``.
"""

from __future__ import annotations

import pytest
import torch

from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.session import DecodeSession, greedy_batch, max_output_steps
from tests.support.marian import VARIANTS, build_marian, require_import_extra

SENTENCES = ["나는 학생입니다.", "제발 앉아.", "오늘 날씨가 정말 좋네요, 그렇지 않나요?", "손대지 마.", "ㅋㅋ 뷁 😀 값"]


@pytest.fixture(scope="module", params=list(VARIANTS))
def imported(request, tmp_path_factory):
    require_import_extra()
    from core.checkpoints.marian import import_marian

    root = tmp_path_factory.mktemp(f"marian-{request.param}")
    hf, tok = build_marian(root / "hf", request.param, probe=SENTENCES)
    lines: list[str] = []
    out = import_marian(str(root / "hf"), root / "ours", log=lines.append)
    return request.param, hf, tok, load_checkpoint(out, device="cpu")


def _hf_source_ids(tok, texts):
    return [tok(t).input_ids for t in texts]


def test_config_expresses_the_variant(imported):
    variant, hf, _, ck = imported
    act, scale, learned = VARIANTS[variant]
    c = ck.config
    assert (c.activation, c.scale_embedding) == (act, scale)
    assert c.positional == ("learned" if learned else "sinusoidal_halves")
    v = hf.config.vocab_size
    assert (c.pad_id, c.eos_id, c.unk_id, c.start_id, c.bos_id) == (v - 1, 0, 1, v - 1, v - 1)
    assert c.final_logits_bias and c.share_src_tgt_embed and c.tie_output and c.never_output_pad
    assert ck.model.tgt_embed is ck.model.src_embed and ck.model.generator.weight is ck.model.src_embed.weight


def test_source_tokens_equal_marian_tokenizer(imported):
    _, hf, tok, ck = imported
    ours = [ck.src_tokenizer.encode(t).ids + [ck.config.eos_id] for t in SENTENCES]
    assert ours == _hf_source_ids(tok, SENTENCES)
    assert any(ck.config.unk_id in ids for ids in ours)  # the vocabulary lacks some pieces: unk is exercised
    for text in SENTENCES:  # labels are the pieces (▁ = word start, as our BPE labels); unk reads [UNK]
        enc = ck.src_tokenizer.encode(text)
        pieces = tok.spm_source.encode(text, out_type=str)
        assert enc.tokens == [p if i != ck.config.unk_id else "[UNK]" for p, i in zip(pieces, enc.ids)]
        assert enc.tokens[0].startswith("▁")


def _padded_batch(ck, tok):
    c = ck.config
    src_ids = _hf_source_ids(tok, SENTENCES)
    tgt_ids = [
        tok(text_target=t).input_ids
        for t in ["I am a student.", "Please sit.", "Nice weather today, isn't it?", "Hands off.", "Hello"]
    ]
    s, t = max(map(len, src_ids)), max(map(len, tgt_ids))
    src = torch.full((len(src_ids), s), c.pad_id)
    dec_in = torch.full((len(tgt_ids), t), c.pad_id)
    real = torch.zeros(len(tgt_ids), t, dtype=torch.bool)
    for i, (a, b) in enumerate(zip(src_ids, tgt_ids)):
        src[i, : len(a)] = torch.tensor(a)
        dec_in[i, : len(b)] = torch.tensor([c.start_id] + b[:-1])
        real[i, : len(b)] = True
    return src, dec_in, real


def test_logits_on_padded_batch_match_transformers(imported):
    _, hf, tok, ck = imported
    src, dec_in, real = _padded_batch(ck, tok)
    assert bool((src == ck.config.pad_id).any()) and not bool(real.all())  # really padded
    with torch.no_grad():
        theirs = hf(input_ids=src, attention_mask=src.ne(ck.config.pad_id), decoder_input_ids=dec_in).logits
        ours = ck.model(src, dec_in)
    assert ours.shape == theirs.shape
    diff = (ours - theirs).abs()[real]  # positions after a target's end are padding (HF masks nothing there)
    assert float(diff.max()) < 1e-4
    assert float(theirs.std()) > 0.5  # not a degenerate model


def test_attention_weights_match_output_attentions(imported):
    _, hf, tok, ck = imported
    src, dec_in, real = _padded_batch(ck, tok)
    with torch.no_grad():
        o = hf(input_ids=src, attention_mask=src.ne(ck.config.pad_id), decoder_input_ids=dec_in, output_attentions=True)
        enc = ck.model.encode(src, need_weights=True)
        tgt_kpm = dec_in.eq(ck.config.pad_id)
        tgt_kpm[:, 0] = False
        dec = ck.model.decode(dec_in, enc.memory, enc.src_key_padding_mask, tgt_kpm, need_weights=True)
    n_layers, n_heads = ck.config.n_encoder_layers, ck.config.n_heads
    assert len(enc.self_attn) == len(o.encoder_attentions) == n_layers
    rows = real[:, None, :]  # [B, 1, T]: real target query rows (pad rows differ by design: we also mask pad keys)
    for layer in range(n_layers):
        ours_e, theirs_e = enc.self_attn[layer], o.encoder_attentions[layer]
        assert ours_e.shape == theirs_e.shape == (src.size(0), n_heads, src.size(1), src.size(1))
        assert float((ours_e - theirs_e).abs().max()) < 1e-5
        for ours, theirs in (
            (dec.self_attn[layer], o.decoder_attentions[layer]),
            (dec.cross_attn[layer], o.cross_attentions[layer]),
        ):
            assert ours.shape == theirs.shape
            d = (ours - theirs).abs().amax(-1)  # [B, H, T]
            assert float(d.masked_select(rows.expand_as(d)).max()) < 1e-5
    # per head: heads differ from each other (the test would notice a head permutation)
    w = o.encoder_attentions[0][0]
    assert float((w[0] - w[1]).abs().max()) > 1e-2


def test_greedy_equals_generate(imported):
    _, hf, tok, ck = imported
    ended_early = 0
    for text in SENTENCES:
        ids = tok(text, return_tensors="pt").input_ids
        budget = max_output_steps(ids.size(1), ck.config.max_len)
        with torch.no_grad():
            gen = hf.generate(ids, num_beams=1, do_sample=False, max_new_tokens=budget)[0, 1:].tolist()
        session = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, text)
        session.run()
        assert session.output_ids == gen
        assert ck.config.pad_id not in gen
        ended_early += gen[-1] == ck.config.eos_id
        assert ck.tgt_tokenizer.decode(gen) == tok.decode(gen, skip_special_tokens=True).replace("<unk>", "[UNK]")
    batch = greedy_batch(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, SENTENCES)
    for text, out in zip(SENTENCES, batch):
        session = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, text)
        session.run()
        assert out == [i for i in session.output_ids if i != ck.config.eos_id]
    assert ended_early >= 1  # EOS handling is exercised, not only the length limit


def _generate_beam4(hf, tok, ck, text, alpha):
    ids = tok(text, return_tensors="pt").input_ids
    budget = max_output_steps(ids.size(1), ck.config.max_len)
    with torch.no_grad():
        out = hf.generate(ids, num_beams=4, do_sample=False, max_new_tokens=budget, length_penalty=alpha, early_stopping=False)[
            0, 1:
        ].tolist()
    return ids[0].tolist(), [i for i in out if i != ck.config.pad_id]


def test_beam4_equals_generate_when_both_rank_by_log_probability(imported):
    """With no length normalisation (our GNMT α = 0, transformers' length_penalty = 0) both searches
    rank hypotheses by total log-probability, and the outputs are identical. Repeated with EOS's
    bias lowered in both models (same change to both), so that long outputs are compared too."""
    from core.decoding.beam import beam_search

    _, hf, tok, ck = imported
    lengths = []
    try:
        for shift, texts in ((0.0, SENTENCES), (-3.0, SENTENCES[:3])):
            with torch.no_grad():
                hf.final_logits_bias[0, ck.config.eos_id] += shift
                ck.model.final_logits_bias[ck.config.eos_id] += shift
            for text in texts:
                _, theirs = _generate_beam4(hf, tok, ck, text, 0.0)
                best = beam_search(ck.model, ck.src_tokenizer, text, beam=4, alpha=0.0)[0]
                assert best.ids + ([] if best.truncated else [ck.config.eos_id]) == theirs
                lengths.append((len(theirs), theirs[-1] == ck.config.eos_id))
            with torch.no_grad():
                hf.final_logits_bias[0, ck.config.eos_id] -= shift
                ck.model.final_logits_bias[ck.config.eos_id] -= shift
    finally:
        with torch.no_grad():  # the same bias as imported, for the other tests
            ck.model.final_logits_bias.copy_(hf.final_logits_bias[0])
    assert any(n > 1 for n, _ in lengths)  # not only one-token outputs


def test_beam4_with_length_penalty_is_never_worse_under_gnmt(imported):
    """With α = 1 the two differ by design: we divide log P by GNMT's ((5 + |Y|) / 6)^α, transformers
    by |Y|^α, so they may choose different outputs. Ours is never worse under GNMT's score (a
    teacher-forced rescoring of both outputs); an output cut at the length limit is scored without EOS."""
    from core.decoding.beam import beam_search, sequence_score

    _, hf, tok, ck = imported
    for text in SENTENCES:
        src, theirs = _generate_beam4(hf, tok, ck, text, 1.0)
        best = beam_search(ck.model, ck.src_tokenizer, text, beam=4, alpha=1.0)[0]
        ended = bool(theirs) and theirs[-1] == ck.config.eos_id
        score_theirs = sequence_score(ck.model, src, theirs[:-1] if ended else theirs, 1.0, eos=ended)
        score_ours = sequence_score(ck.model, src, best.ids, 1.0, eos=not best.truncated)
        assert abs(score_ours - best.score) < 1e-4
        assert score_ours >= score_theirs - 1e-4
