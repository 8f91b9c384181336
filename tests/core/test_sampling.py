"""Sampling as a decoding strategy: the shaped distribution equals an independent computation,
a seed repeats a draw, temperature 0 is greedy decoding, and the result on screen is the
model's own at the drawn tokens (the session steps through the draw, as for beam search)."""

from __future__ import annotations

import math

import pytest
import torch

from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.live import LiveDecoder
from core.decoding.sampling import shaped_distribution
from core.decoding.strategy import DecodingStrategy
from core.decoding.translate import translate

SENTENCES = ["집에 누군가 있어?", "제발 앉아.", "외로워."]


@pytest.fixture(scope="module")
def ck(tiny_checkpoint):
    return load_checkpoint(tiny_checkpoint, device="cpu")


def test_shaped_distribution_equals_an_independent_computation():
    logits = torch.tensor([2.0, 1.0, 0.5, 0.0, -1.0, 3.0])
    t = 0.7
    p = [math.exp(x / t) for x in logits.tolist()]
    z = sum(p)
    p = [x / z for x in p]
    got = shaped_distribution(logits, t)
    assert got.tolist() == pytest.approx(p, abs=1e-6) and float(got.sum()) == pytest.approx(1.0)
    top2 = shaped_distribution(logits, t, top_k=2)  # ids 5 and 0 only
    assert [i for i, v in enumerate(top2.tolist()) if v > 0] == [0, 5]
    assert top2[5] == pytest.approx(p[5] / (p[5] + p[0])) and float(top2.sum()) == pytest.approx(1.0)
    nucleus = shaped_distribution(logits, t, top_p=p[5] + 1e-6)  # the first token's mass just short of top-p
    assert [i for i, v in enumerate(nucleus.tolist()) if v > 0] == [0, 5]  # the token crossing top-p stays
    only_first = shaped_distribution(logits, t, top_p=p[5] - 1e-6)
    assert only_first.tolist() == [0, 0, 0, 0, 0, 1.0]
    assert shaped_distribution(logits, 0).tolist() == [0, 0, 0, 0, 0, 1.0]  # temperature 0: the argmax


@pytest.mark.parametrize(
    "bad, words",
    [
        ({"temperature": -0.1}, "temperature must be at least 0"),
        ({"top_k": -1}, "top-k must be"),
        ({"top_p": 0.0}, "top-p must be in"),
        ({"top_p": 1.5}, "top-p must be in"),
    ],
)
def test_settings_out_of_range_are_value_errors(bad, words):
    with pytest.raises(ValueError, match=words):
        DecodingStrategy.sampling(**bad)
    with pytest.raises(ValueError, match="belong to sampling"):
        DecodingStrategy("greedy", 1, temperature=0.5)


@pytest.mark.parametrize("text", SENTENCES)
def test_temperature_zero_is_greedy(ck, text):
    greedy = translate(ck, text)
    cold = translate(ck, text, beam=DecodingStrategy.sampling(0.0, seed=123))
    assert [s.token_id for s in cold.steps] == [s.token_id for s in greedy.steps]
    assert cold.translation == greedy.translation and cold.mode == "sampling"
    for a, b in zip(cold.steps, greedy.steps):
        assert a.top_k == b.top_k  # the model's own distribution at each drawn token
    assert torch.equal(cold.maps.cross, greedy.maps.cross)


def test_a_seed_repeats_a_draw_and_other_seeds_draw_otherwise(ck):
    s = DecodingStrategy.sampling(1.5, seed=7)
    a, b = (translate(ck, SENTENCES[0], beam=s) for _ in range(2))
    assert [x.token_id for x in a.steps] == [x.token_id for x in b.steps]
    draws = {
        tuple(x.token_id for x in translate(ck, SENTENCES[0], beam=DecodingStrategy.sampling(1.5, seed=n)).steps)
        for n in range(6)
    }
    assert len(draws) > 1  # a hot random model draws different outputs for different seeds
    live = LiveDecoder(ck, SENTENCES[0], beam=s)  # the app's live path steps through the same draw
    live.seek(10**9)
    assert [x.token_id for x in live.state().result.steps] == [x.token_id for x in a.steps]


def test_a_top_k_of_one_is_greedy_at_any_temperature(ck):
    greedy = translate(ck, SENTENCES[1])
    r = translate(ck, SENTENCES[1], beam=DecodingStrategy.sampling(2.0, top_k=1, seed=3))
    assert [x.token_id for x in r.steps] == [x.token_id for x in greedy.steps]
    assert r.logprob == pytest.approx(greedy.logprob, abs=1e-4)  # log P is the model's own (T = 1)
