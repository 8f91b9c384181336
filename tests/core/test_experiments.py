"""Lecture experiments checked against independent computations: forced tokens, teacher-forced
loss, the causal mask switched off, two sentences in one padded batch, encode-once paths, and the
line ``translate --reference`` prints."""

from __future__ import annotations

import json
import math

import pytest
import torch
import torch.nn.functional as F

from core.__main__ import main as cli
from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.batch import translate_batch
from core.decoding.beam import beam_search
from core.decoding.experiments import fresh_session
from core.decoding.session import DecodeSession, teacher_forced
from core.decoding.translate import translate
from tests.support import ROOT

TEXT = "집에 누군가 있어?"


@pytest.fixture(scope="module")
def ck(tiny_checkpoint):
    return load_checkpoint(tiny_checkpoint, device="cpu")


def prefix_of(ck, n=2):
    """The first n ids of a non-greedy continuation: token ids the model would not pick itself."""
    s = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, TEXT)
    st = s.step()
    runner_up = st.top_k[1][1]
    return [runner_up, st.top_k[2][1]][:n]


def test_forced_continuation_equals_teacher_forced_logits_on_forked_prefix(ck):
    forced = prefix_of(ck)
    s = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, TEXT)
    for tid in forced:
        s.step(force=tid).forced = True
    s.run()
    assert s.output_ids[:2] == forced and len(s.steps) > 2
    c = ck.model.config
    tf = teacher_forced(ck.model, s.source.ids, [c.start_id] + s.output_ids[:-1], [], [])
    torch.testing.assert_close(torch.stack([st.logits for st in s.steps]), tf.logits, atol=1e-5, rtol=0)
    # after the fork the model chooses its own argmax again
    assert all(st.token_id == int(st.logits.argmax()) for st in s.steps[2:])


def test_translate_prefix_marks_forced_steps_and_totals_logprob(ck):
    text_prefix = ck.tgt_tokenizer.decode(prefix_of(ck))
    ids = ck.tgt_tokenizer.encode(text_prefix).ids
    r = translate(ck, TEXT, prefix=text_prefix)
    assert [s.token_id for s in r.steps[: len(ids)]] == ids
    assert [s.forced for s in r.steps] == [True] * len(ids) + [False] * (len(r.steps) - len(ids))
    tf = teacher_forced(ck.model, r.source.ids, [ck.config.start_id] + [s.token_id for s in r.steps[:-1]], [], [])
    logp = tf.logits.log_softmax(-1).gather(1, torch.tensor([[s.token_id] for s in r.steps]))[:, 0]
    assert r.logprob == pytest.approx(float(logp.sum()), abs=1e-4)
    j = r.to_json()
    assert [s["forced"] for s in j["steps"]] == [s.forced for s in r.steps]


def test_beam_continues_from_forced_prefix(ck):
    forced = prefix_of(ck)
    r = translate(ck, TEXT, beam=3, prefix=ck.tgt_tokenizer.decode(forced))
    ids = ck.tgt_tokenizer.encode(ck.tgt_tokenizer.decode(forced)).ids
    assert [s.token_id for s in r.steps[: len(ids)]] == ids and all(s.forced for s in r.steps[: len(ids)])
    s = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, TEXT)
    hyps = beam_search(ck.model, ck.src_tokenizer, TEXT, beam=3, session=s, prefix=ids)
    assert all(h.ids[: len(ids)] == ids for h in hyps)
    trace = r.to_json()["beam_trace"]
    assert len(trace) == len(r.beam_trace) > 0 and all(
        row["tokens"][: len(ids)] == ck.tgt_tokenizer.ids_to_tokens(ids)
        for rows in trace[len(ids) - 1 :]
        for row in rows
        if len(row["tokens"]) >= len(ids)
    )


def manual_nll(ck, text, reference, causal):
    """Independent pass: embeddings and decoder layers called one by one, mask given by hand."""
    m, c = ck.model, ck.config
    src = torch.tensor([ck.src_tokenizer.encode(text).ids + [c.eos_id]])
    ref = ck.tgt_tokenizer.encode(reference).ids
    tgt_in, targets = torch.tensor([[c.start_id] + ref]), torch.tensor(ref + [c.eos_id])
    t = tgt_in.size(1)
    with torch.no_grad():
        enc = m.encode(src)
        x = m.tgt_pos(m.tgt_embed(tgt_in) * m.embed_scale)
        mask = torch.ones(t, t, dtype=torch.bool).triu(1)[None, None] if causal else None
        for layer in m.decoder_layers:
            x = layer(x, enc.memory, mask, None)[0]
        if m.decoder_norm is not None:
            x = m.decoder_norm(x)
        logits = m.generator(x)[0]
    return float(F.cross_entropy(logits, targets))


def test_teacher_forced_loss_and_causal_off_equal_manual_passes(ck):
    ref = "Is anybody home?"
    on = translate(ck, TEXT, reference=ref)
    off = translate(ck, TEXT, reference=ref, causal=False)
    assert on.loss == pytest.approx(manual_nll(ck, TEXT, ref, True), abs=1e-5)
    assert off.loss == pytest.approx(manual_nll(ck, TEXT, ref, False), abs=1e-5)
    assert abs(on.loss - off.loss) > 1e-4
    assert on.perplexity == pytest.approx(math.exp(on.loss))
    assert on.causal and not off.causal
    assert not off.maps.causal_mask.any() and on.maps.causal_mask.equal(
        torch.ones(len(on.steps), len(on.steps), dtype=torch.bool).triu(1)
    )
    # without the mask the decoder attends to later positions: weight above the diagonal
    upper = torch.ones_like(on.maps.causal_mask).triu(1)
    assert float(off.maps.decoder_self[:, :, upper].sum()) > 0 and float(on.maps.decoder_self[:, :, upper].sum()) == 0
    j = off.to_json()
    assert j["causal"] is False and j["loss"] == pytest.approx(off.loss, abs=1e-6)


def test_reference_steps_give_probability_outside_top_k_argmax_and_running_loss(ck):
    r = translate(ck, TEXT, reference="Is anybody home?", top_k=1)
    tf_logp = None
    c = ck.config
    ref_ids = ck.tgt_tokenizer.encode("Is anybody home?").ids
    tf = teacher_forced(ck.model, r.source.ids, [c.start_id] + ref_ids, [], [])
    tf_logp = tf.logits.log_softmax(-1)
    targets = ref_ids + [c.eos_id]
    outside = 0
    for k, (st, t) in enumerate(zip(r.steps, targets)):
        assert st.logprob == pytest.approx(float(tf_logp[k, t]), abs=1e-5)
        assert st.argmax == (
            ck.tgt_tokenizer.id_to_token(int(tf_logp[k].argmax())) if int(tf_logp[k].argmax()) != c.eos_id else "[EOS]"
        )
        assert st.running_loss == pytest.approx(float(-tf_logp[torch.arange(k + 1), targets[: k + 1]].mean()), abs=1e-5)
        outside += st.top_k[0][0] != ck.tgt_tokenizer.id_to_token(t)
    assert outside > 0  # a random model: some reference tokens are outside the top-1
    js = r.to_json()["steps"]
    assert all(set(s) >= {"ref_logprob", "argmax"} for s in js)


@pytest.mark.parametrize("kw", [dict(), dict(beam=3), dict(reference="Is anybody home?")])
def test_translate_encodes_once_and_takes_one_path(ck, monkeypatch, kw):
    calls = {"encode": 0, "decode_T": []}
    enc, dec = ck.model.encode, ck.model.decode

    def counting_encode(*a, **k):
        calls["encode"] += 1
        return enc(*a, **k)

    def counting_decode(tgt, *a, **k):
        calls["decode_T"].append(tgt.size(1))
        return dec(tgt, *a, **k)

    monkeypatch.setattr(ck.model, "encode", counting_encode)
    monkeypatch.setattr(ck.model, "decode", counting_decode)
    r = translate(ck, TEXT, **kw)
    assert calls["encode"] == 1
    if "reference" in kw:
        assert calls["decode_T"] == [len(r.steps)]  # one parallel pass, no greedy decoding
    else:
        assert set(calls["decode_T"]) == {1}


def one_token_text(ck):
    for w in ["집", "네", "앉아", "나", "너"]:
        if len(ck.src_tokenizer.encode(w).ids) == 1:
            return w
    pytest.skip("no one-token word in the tiny vocabulary")


def test_batch_equals_singles_with_exact_zero_pad_rows_and_columns(ck):
    short = one_token_text(ck)
    long = "집에 누군가 있어? 제발 앉아. 외로워. 나는 학생입니다."
    results = translate_batch(ck, [long, short])
    singles = [translate(ck, long), translate(ck, short)]
    for r, s in zip(results, singles):
        assert r.translation == s.translation
        assert [st.token_id for st in r.steps] == [st.token_id for st in s.steps]
        n_s, n_t = len(s.source.ids), len(s.steps)
        torch.testing.assert_close(r.maps.cross[:, :, :n_t, :n_s], s.maps.cross, atol=1e-5, rtol=0)
        torch.testing.assert_close(r.maps.decoder_self[:, :, :n_t, :n_t], s.maps.decoder_self, atol=1e-5, rtol=0)
        torch.testing.assert_close(r.maps.encoder_self[:, :, :n_s, :n_s], s.maps.encoder_self, atol=1e-5, rtol=0)
    r = results[1]
    assert len(ck.src_tokenizer.encode(short).ids) == 1
    skpm, tkpm = r.maps.src_key_padding_mask, r.maps.tgt_key_padding_mask
    assert skpm.tolist() == [False] * 2 + [True] * (len(skpm) - 2)  # one token + EOS, then pads
    assert tkpm.any() and skpm.any() and not results[0].maps.src_key_padding_mask.any()
    assert tkpm.tolist() == [False] * len(r.steps) + [True] * (len(tkpm) - len(r.steps))
    for name, rows, cols in (("encoder_self", skpm, skpm), ("decoder_self", tkpm, tkpm), ("cross", tkpm, skpm)):
        w = getattr(r.maps, name)
        assert (w[:, :, rows] == 0).all() and (w[..., cols] == 0).all()
        assert not (w == 0).all()
    j = r.to_json()["masks"]
    assert j["src_key_padding"] == skpm.tolist() and j["tgt_key_padding"] == tkpm.tolist()


def test_a_batch_says_which_sentence_is_not_korean_as_a_single_translation_does(ck):
    from core.decoding.confidence import NOT_KOREAN

    texts = ["집에 누군가 있어?", "Is anyone home?"]
    results = translate_batch(ck, texts)
    singles = [translate(ck, t) for t in texts]
    assert [r.not_korean for r in results] == [s.not_korean for s in singles] == [False, True]
    assert NOT_KOREAN in results[1].notice and NOT_KOREAN not in (results[0].notice or "")
    assert results[1].translation == singles[1].translation  # translated all the same
    assert results[1].to_json()["not_korean"] is True


def test_back_then_step_gives_bit_identical_maps(ck):
    s = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, TEXT)
    for _ in range(3):
        s.step()
    before = s.maps()
    s.back()
    s.step()
    after = s.maps()
    for name in ("encoder_self", "decoder_self", "cross"):
        assert torch.equal(getattr(before, name), getattr(after, name))
    f = fresh_session(s)
    assert f.steps == [] and f.memory is s.memory and len(s.steps) == 3


def test_cli_experiment_options(ck, tiny_checkpoint, capsys):
    assert cli(["translate", TEXT, "--checkpoint", str(tiny_checkpoint), "--no-causal-mask"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "--reference" in err and "\n" not in err
    assert cli(["translate", TEXT, "--checkpoint", str(tiny_checkpoint), "--batch-with", "외로워.", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [b["translation"] for b in d["batch"]] == [translate(ck, TEXT).translation, translate(ck, "외로워.").translation]
    assert (
        cli(
            [
                "translate",
                TEXT,
                "--checkpoint",
                str(tiny_checkpoint),
                "--reference",
                "Is anybody home?",
                "--no-causal-mask",
                "--json",
            ]
        )
        == 0
    )
    d = json.loads(capsys.readouterr().out)
    assert d["causal"] is False and d["loss"] > 0 and all("ref_logprob" in s and "argmax" in s for s in d["steps"])
    prefix = ck.tgt_tokenizer.decode(prefix_of(ck))
    n = len(ck.tgt_tokenizer.encode(prefix).ids)
    assert cli(["translate", TEXT, "--checkpoint", str(tiny_checkpoint), "--prefix", prefix, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [s["forced"] for s in d["steps"]] == [True] * n + [False] * (len(d["steps"]) - n)
    assert d["translation"] == translate(ck, TEXT, prefix=prefix).translation
    assert cli(["translate", TEXT, "--checkpoint", str(tiny_checkpoint), "--batch-with", "x", "--beam", "2"]) == 2
    assert "cannot be combined with --beam" in capsys.readouterr().err


def test_reference_line_is_the_argmax_per_reference_position(tiny_checkpoint, capsys):
    """`translate --reference` prints the model's argmax at each reference position (not a
    translation), as the README says: checked against an independent teacher-forced forward pass."""
    reference = "Is someone at home?"
    assert cli(["translate", TEXT, "--reference", reference, "--checkpoint", str(tiny_checkpoint)]) == 0
    printed, err = capsys.readouterr()
    assert "loss:" in err
    ck = load_checkpoint(tiny_checkpoint, device="cpu")
    c, tgt_tok = ck.config, ck.tgt_tokenizer
    src = torch.tensor([translate(ck, TEXT).source.ids])  # the source ids the app encodes
    tgt_in = torch.tensor([[c.start_id] + tgt_tok.encode(reference).ids])
    with torch.no_grad():
        argmax = ck.model(src, tgt_in)[0].argmax(-1).tolist()  # [T]: one per reference position
    ids = argmax[: argmax.index(c.eos_id)] if c.eos_id in argmax else argmax
    assert printed == tgt_tok.decode(ids) + "\n"
    doc = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "model's argmax at each reference position" in doc.replace("\n", " ")
