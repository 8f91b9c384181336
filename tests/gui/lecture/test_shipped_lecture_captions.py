"""The shipped lecture (docs/lectures/attention-is-all-you-need.toml): valid on the shipped model,
and every number or aligned word its captions name is what the shipped model computes."""

from __future__ import annotations

import json
import math
import re

import pytest
import torch

from core.transformer.config import ModelConfig
from gui.state.lecture import load_lecture
from gui.state.lecture_check import check_lecture
from tests.support import ROOT, shipped

pytest.importorskip("tomllib")  # Python 3.11+, as the lecture files
SHIPPED_LECTURE = ROOT / "docs" / "lectures" / "attention-is-all-you-need.toml"


TRAIN = "나는 기차를 타고 학교에 가요."


CAT = "고양이가 의자 위에서 자고 있다."


RUNS = "그는 매일 아침 달린다."


@pytest.fixture(scope="module")
def model():
    from core.checkpoints.checkpoint import load_checkpoint

    torch.set_num_threads(1)
    return load_checkpoint(shipped(), device="cpu")


@pytest.fixture(scope="module")
def train(model):
    from core.decoding.translate import translate

    r = translate(model, TRAIN)
    assert r.translation == "I go to school by train."
    return r


def near(value: float, claimed: str) -> str:
    """``value`` rounded to as many decimals as ``claimed`` is exactly the caption's text (a weight
    of 0.9943 is ".99", never "1.00", as the slide's own cells print it); returns ``claimed``."""
    decimals = len(claimed.split(".")[1]) if "." in claimed else 0
    shown = f"{value:.{decimals}f}".replace("-", "−")
    assert shown in (claimed, claimed.replace("−", "")) or float(shown.replace("−", "-")) == float(claimed.replace("−", "-")), (
        value,
        shown,
        claimed,
    )
    return claimed


def row(maps, kind: str, layer: int, head: int, query: str, tokens=None):
    """The (1-based layer/head) row of ``query`` as {key token: weight} and its argmax key."""
    w = {"enc": maps.encoder_self, "cross": maps.cross, "dec": maps.decoder_self}[kind][layer - 1, head - 1]
    rows = maps.src_tokens if kind == "enc" else maps.tgt_tokens
    keys = maps.tgt_tokens if kind == "dec" else maps.src_tokens
    r = w[rows.index(query)]
    return {k: float(r[j]) for j, k in enumerate(keys)}, keys[int(r.argmax())]


def aligned(maps, kind, layer, head, query, key, claimed) -> str:
    weights, top = row(maps, kind, layer, head, query)
    assert top == key, (kind, layer, head, query, top, key)
    return near(weights[key], claimed)


def check_tokens(model, train):
    c = model.config
    assert train.maps.src_tokens == ["▁나는", "▁기", "차", "를", "▁타고", "▁학교에", "▁가", "요", ".", "[EOS]"]
    assert (c.src_vocab_size, c.tgt_vocab_size, c.d_model) == (8000, 8000, 256)
    m = model.model
    assert m.src_embed.weight is m.tgt_embed.weight is m.generator.weight  # one table for all three
    assert c.scale_embedding and m.embed_scale == 16.0
    return ["10", "9", "8,000", "256", "256", "16", aligned(train.maps, "enc", 1, 1, "▁기", "차", "1.00")]


def check_positions(model, train):
    from core.decoding.translate import translate

    r = translate(model, "나는 커피를 좋아하고 그는 커피를 싫어해.")
    assert r.translation == "I like coffee and he hates coffee."
    toks = r.maps.src_tokens
    assert [i + 1 for i, t in enumerate(toks) if t == "▁커피"] == [2, 7]
    assert model.config.positional == "sinusoidal" and model.config.d_model // 2 == 128
    w = r.maps.encoder_self[0, 3]  # layer 1, head 4
    assert int(w[1].argmax()) == 1 and int(w[6].argmax()) == 6  # each ▁커피 on itself
    return [
        "2",
        "7",
        "128",
        near(float(w[1, 1]), "0.49"),
        "2",
        near(float(w[1, 6]), "0.03"),
        near(float(w[6, 6]), "0.78"),
        "7",
        near(float(w[6, 1]), "0.00"),
    ]


def check_encoder(model, train):
    m = train.maps
    return [
        aligned(m, "enc", 2, 4, "▁기", "를", "0.79"),
        aligned(m, "enc", 2, 4, "차", "를", "0.73"),
        aligned(m, "enc", 2, 4, "를", "▁타고", "0.49"),
    ]


def _forced(model, causal: bool):
    from core.decoding.translate import translate

    return translate(model, TRAIN, reference="I go to school by train.", causal=causal)


def check_causal(model, train):
    r = _forced(model, True)
    t = r.maps.decoder_self.shape[-1]
    assert bool(torch.triu(torch.ones(t, t, dtype=torch.bool), 1).eq(r.maps.causal_mask).all())
    assert float(r.maps.decoder_self[..., torch.triu(torch.ones(t, t, dtype=torch.bool), 1)].max()) == 0.0
    return [near(r.loss, "0.32")]


def check_causal_off(model, train):
    on, off = _forced(model, True), _forced(model, False)
    w = off.maps.decoder_self
    t = w.shape[-1]
    share = w[:, :, range(t - 1), range(1, t)]
    return [
        near(100 * float(share.mean()), "16"),
        near(100 * float(share[2, 0].mean()), "29"),
        near(on.loss, "0.32"),
        near(off.loss, "1.47"),
    ]


def check_padding(model, train):
    from core.decoding.batch import translate_batch
    from core.decoding.translate import translate

    short, long = translate_batch(model, ["나는 학생입니다.", TRAIN])
    pad = short.maps.src_key_padding_mask
    assert len(long.maps.src_tokens) == 10 and int(pad.sum()) == 5 and short.source.n_real == 5
    assert float(short.maps.encoder_self[..., pad].abs().max()) == 0.0  # exactly 0, every layer and head
    assert float(short.maps.cross[..., pad].abs().max()) == 0.0
    assert short.translation == translate(model, "나는 학생입니다.").translation == "I'm a student."
    return ["10", "5", "5", "0"]


def check_step_by_step(model, train):
    from core.decoding.live import LiveDecoder

    live = LiveDecoder(model, TRAIN)
    live.seek(2)
    r = live.state().result
    assert [s.token for s in r.steps] == ["▁I", "▁go"] and r.maps.tgt_tokens == ["[BOS]", "▁I"]
    return ["2", aligned(r.maps, "cross", 4, 1, "▁I", "▁가", "0.75")]


def check_alignment(model, train):
    m = train.maps
    return [
        "1",
        aligned(m, "cross", 1, 1, "▁school", "▁학교에", "1.00"),
        aligned(m, "cross", 1, 1, "▁I", "▁나는", "0.99"),
        aligned(m, "cross", 1, 1, "▁go", "▁가", "1.00"),
        aligned(m, "cross", 1, 1, "▁train", "차", "0.64"),
    ]


def check_next_word(model, train):
    m = train.maps
    weights, _ = row(m, "cross", 4, 1, "▁by")
    return [
        aligned(m, "cross", 4, 1, "▁by", "차", "0.57"),
        near(weights["▁기"], "0.40"),
        aligned(m, "cross", 4, 1, "▁go", "▁학교에", "0.79"),
    ]


def check_learning(model, train):
    from core.training.live_session import LiveSession, LiveSettings

    step = next(s for s in load_lecture(SHIPPED_LECTURE).steps if s.learn is not None)
    part = step.learn
    assert (part.task, part.seed, part.follow_best) == ("reverse", 0, True)
    d = LiveSettings()  # the run the step trains: the Learn tab's defaults
    assert (d.layers, d.n_heads, d.d_model) == (2, 4, 64)
    session = LiveSession(part.task, d, seed=part.seed)
    start = session.evaluate()
    assert start.updates == 0
    session.step(part.updates)
    end = session.evaluate()
    layer, head = end.best_head
    w, known = end.maps.cross[layer, head], end.maps.known_alignment
    rows = known.any(-1).nonzero()[0]
    n = len(end.maps.src_tokens) - 1  # the letters; row t writes target letter t, the source letter n - 1 - t
    assert list(rows) == list(range(n)) and known[rows, n - 1 - rows].all()
    assert (w[rows].argmax(-1) == n - 1 - rows).all()  # the anti-diagonal: each row on the letter it writes
    assert end.alignment > 0.90 and end.accuracy > 0.90
    return ["2", "4", "64", "0", near(100 * start.alignment, "20"), str(part.updates), "90"]


def check_inside(model, train):
    from core.analysis.inside import inside_step

    st, _ = inside_step(model, TRAIN, "cross", 4, 1, 6)
    assert st.query_token == "▁by" and st.q.numel() == 64
    order = sorted(range(len(st.key_tokens)), key=lambda i: -float(st.scores[i]))
    assert [st.key_tokens[i] for i in order[:2]] == ["차", "▁기"]
    first, second = order[:2]
    return [
        "6",
        "64",
        near(float(st.scores[first]), "3.28"),
        near(float(st.scores[second]), "2.92"),
        near(float(st.weights[first]), "0.57"),
        near(float(st.weights[second]), "0.40"),
    ]


def check_heads(model, train):
    from core.analysis.head_stats import head_table

    table = {(h.layer, h.head): h for h in head_table(train.maps, "cross")}
    return [near(table[1, 2].entropy, "1.72"), near(table[1, 1].entropy, "0.62"), near(100 * table[1, 2].sink, "42")]


def check_one_head(model, train):
    from core.analysis.ablation import translate_ablated

    heads = [(la, h) for la in range(1, 5) for h in range(1, 5)]
    out = {lh: translate_ablated(model, TRAIN, [lh], "cross").ablated.translation for lh in heads}
    assert out[1, 1] == "I go to school."
    changed = [lh for lh in heads if out[lh] != train.translation]
    assert changed == [(1, 1), (1, 3)], out  # the aligning head and head 3 of layer 1
    assert {out[lh] for lh in changed} == {"I go to school."}, out  # the one change either makes
    assert all("school" in t for t in out.values())
    return ["1", "16", str(len(changed)), str(len(heads) - len(changed))]


def check_word_layer(model, train):
    from core.analysis.ablation import translate_ablated

    r = translate_ablated(model, TRAIN, [(1, h) for h in range(1, 5)], "enc")
    assert r.ablated.translation == "I go to school."
    assert translate_ablated(model, TRAIN, [(4, h) for h in range(1, 5)], "enc").ablated.translation == train.translation
    assert train.maps.encoder_self[0, :, 1, 2].max() > 0.9  # a layer-1 head joins ▁기 and 차
    assert model.config.norm_first  # pre-LN: x + Sublayer(LayerNorm(x)) keeps x whatever the sub-layer does
    return ["1"]


def check_teacher_forcing(model, train):
    from core.decoding.translate import translate

    r = translate(model, CAT, reference="The cat is sleeping on the chair.")
    first = r.steps[0]
    assert first.token == "▁The" and first.argmax == "▁A"
    return [near(math.exp(first.logprob), "0.17"), near(r.loss, "0.40")]


def check_free_running(model, train):
    from core.decoding.live import LiveDecoder
    from core.decoding.translate import translate

    live = LiveDecoder(model, CAT)
    live.seek(10**9)
    assert live.state().result.translation == "A cat is sleeping on a chair."
    live.fork(1, model.tgt_tokenizer.encode("The").ids)  # what the app's force does
    free = live.state().result
    assert free.translation == "The cat is sleeping on the chair."
    forced = translate(model, CAT, reference="The cat is sleeping on the chair.")  # the teacher-forcing page
    assert free.maps.tgt_tokens == forced.maps.tgt_tokens
    for kind in ("encoder_self", "decoder_self", "cross"):  # one pass or step by step: the same maps
        assert torch.allclose(getattr(free.maps, kind), getattr(forced.maps, kind), atol=1e-4), kind
    return []


def check_greedy(model, train):
    from core.decoding.translate import translate

    r = translate(model, RUNS)
    assert r.maps.src_tokens[3:5] == ["▁달", "린다"]  # 달 alone: moon
    assert r.translation == "He moons every morning."
    tokens = [s.token for s in r.steps]
    assert tokens[:3] == ["▁He", "▁moon", "s"]
    probs = dict(r.steps[1].top_k)
    assert max(probs, key=probs.get) == "▁moon" and sorted(probs, key=probs.get)[-2] == "▁runs"
    return [near(probs["▁moon"], "0.11"), near(probs["▁runs"], "0.09"), near(r.logprob, "−3.73")]


def check_beam(model, train):
    from core.decoding.translate import translate

    greedy, beam = translate(model, RUNS), translate(model, RUNS, beam=4)
    assert beam.translation == "He runs every morning." and beam.beam == 4
    g, b = [s.token for s in greedy.steps], [s.token for s in beam.steps]
    i = next(i for i, (x, y) in enumerate(zip(g, b)) if x != y)
    assert (g[i - 1], g[i], b[i]) == ("▁He", "▁moon", "▁runs")  # the beam kept the second choice
    assert beam.logprob > greedy.logprob
    return ["4", near(beam.logprob, "−2.91"), near(greedy.logprob, "−3.73")]


CHECKS = {
    "Tokens and embeddings": check_tokens,
    "Positional encodings": check_positions,
    "Encoder self-attention": check_encoder,
    "The causal mask": check_causal,
    "Without the causal mask": check_causal_off,
    "Padding masks in a batch": check_padding,
    "Decoding, one step at a time": check_step_by_step,
    "Cross-attention: alignment": check_alignment,
    "Cross-attention: predicting the next word": check_next_word,
    "How attention is learned": check_learning,
    "Inside one attention step": check_inside,
    "Multi-head diversity": check_heads,
    "Ablation: one head at a time": check_one_head,
    "Ablation: a whole encoder layer": check_word_layer,
    "Teacher forcing": check_teacher_forcing,
    "Free running": check_free_running,
    "Greedy decoding": check_greedy,
    "Beam search": check_beam,
}


# what is not a claim about the model: section numbers, equation, layer / head / row / position names
NOT_CLAIMS = re.compile(r"§[\d.]+|Eq\. \d|layer \d|head \d|heads? of one|row \d|position \d|√256|\b1-based", re.IGNORECASE)


def caption_numbers(caption: str) -> list[str]:
    """The numbers a caption states (1,000s and decimals whole; −2.59 keeps its sign)."""
    text = NOT_CLAIMS.sub(" ", caption)
    return re.findall(r"−?\d[\d,]*(?:\.\d+)?(?<!,)", text)


def test_the_shipped_lecture_is_valid_on_the_shipped_model():
    lecture = load_lecture(SHIPPED_LECTURE)
    config = ModelConfig.from_dict(json.loads((shipped() / "config.json").read_text(encoding="utf-8")))
    assert check_lecture(lecture, config) == []
    assert (config.n_encoder_layers, config.n_decoder_layers, config.n_heads, config.d_model) == (4, 4, 4, 256)
    assert [s.title for s in lecture.steps] == list(CHECKS)  # every step has its check below
    assert all(s.caption for s in lecture.steps)


@pytest.mark.parametrize("title", list(CHECKS))
def test_every_number_and_aligned_word_in_a_caption_is_true(title, model, train):
    step = next(s for s in load_lecture(SHIPPED_LECTURE).steps if s.title == title)
    checked = CHECKS[title](model, train)
    stated = caption_numbers(step.caption)
    missing = [n for n in stated if n not in checked]
    assert not missing, f"{title}: the caption states {missing}, which the check does not verify ({checked})"


def test_caption_numbers():
    assert caption_numbers("log P −2.59 (row 6) in layer 4, head 1 (§3.2.2): 16% of 8,000 and 0.64, Eq. 1") == [
        "−2.59",
        "16",
        "8,000",
        "0.64",
    ]


def test_beam_note_gives_each_hypothesis_its_log_p():
    """The beam page's note carries the log P of the best hypotheses (the shipped beam slide's caption
    compares beam's −2.91 with greedy's −3.73, whose output competes in the beam); each equals the search's own."""
    from core.checkpoints.checkpoint import load_checkpoint
    from core.decoding.beam import beam_search
    from core.decoding.translate import translate
    from gui.state.lecture_pages import result_note

    ck = load_checkpoint(shipped(), device="cpu")
    sentence = RUNS
    r = translate(ck, sentence, beam=4)
    hyps = beam_search(ck.model, ck.src_tokenizer, sentence, 4)
    assert r.hypothesis_logprobs == pytest.approx([h.logprob for h in hyps], abs=1e-5)  # float32 sums, another order
    assert [t for t, _, _ in r.hypotheses] == [ck.tgt_tokenizer.decode(h.ids) for h in hyps]

    class VM:
        result, teacher_forced, state = r, False, None

        def side_by_side(self):
            return []

    note = result_note(VM(), None)
    for text, lp in zip([t for t, _, _ in r.hypotheses[:3]], r.hypothesis_logprobs[:3]):
        assert f"{text!r}" in note and f"(log P {lp:.2f})" in note
    assert repr("He runs every morning.") in note and "(log P -2.91)" in note  # the slide's beam output
    # the slide's greedy output is a hypothesis of the beam too (fourth here, below the three the note shows)
    texts = [t for t, _, _ in r.hypotheses]
    assert round(r.hypothesis_logprobs[texts.index("He moons every morning.")], 2) == -3.73
    assert [round(x, 6) for x in r.hypothesis_logprobs] == [h["logprob"] for h in r.to_json()["hypotheses"]]
