"""DecodingStrategy: the constructors and their errors, and that greedy / beam through the strategy
decode exactly what the beam-size paths and an independent DecodeSession / beam_search decode."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.beam import beam_search
from core.decoding.experiments import force_prefix
from core.decoding.live import LiveDecoder
from core.decoding.session import DecodeSession, greedy_batch
from core.decoding.strategy import STRATEGIES, DecodingStrategy, as_strategy
from core.decoding.translate import translate
from core.defaults import MAX_BEAM
from core.errors import InputError
from core.evaluation.evaluate import translate_corpus

SENTENCES = ["집에 누군가 있어?", "제발 앉아.", "외로워."]


@pytest.fixture(scope="module")
def ck(tiny_checkpoint):
    return load_checkpoint(tiny_checkpoint, device="cpu")


# ---------- the type ----------
def test_constructors_give_the_named_values():
    g = DecodingStrategy.greedy()
    assert (g.name, g.beam_size, g.is_greedy, g.is_beam, g.searches_ahead) == ("greedy", 1, True, False, False)
    b = DecodingStrategy.beam(4)
    assert (b.name, b.beam_size, b.is_greedy, b.is_beam, b.searches_ahead) == ("beam", 4, False, True, True)
    assert DecodingStrategy() == g == DecodingStrategy("greedy", 1)
    assert DecodingStrategy.from_beam_size(1) == g
    assert DecodingStrategy.from_beam_size(2) == DecodingStrategy.beam(2) == DecodingStrategy("beam", 2)
    assert DecodingStrategy.from_beam_size(MAX_BEAM).beam_size == MAX_BEAM
    assert (str(g), str(b)) == ("greedy", "beam 4")
    assert set(STRATEGIES) == {"greedy", "beam", "sampling"} and STRATEGIES["greedy"] is None


def test_strategy_is_frozen_and_hashable():
    g = DecodingStrategy.greedy()
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.beam_size = 3
    assert {DecodingStrategy.greedy(): "a", DecodingStrategy.from_beam_size(1): "b"} == {g: "b"}


@pytest.mark.parametrize("k", [0, -1, -16])
def test_beam_size_below_one_is_a_value_error(k):
    with pytest.raises(ValueError, match=rf"beam size must be at least 1 \(1 = greedy\), got {k}$"):
        DecodingStrategy.from_beam_size(k)


def test_invalid_combinations_are_errors():
    with pytest.raises(ValueError, match="a beam of 1 is greedy decoding"):
        DecodingStrategy.beam(1)
    with pytest.raises(ValueError, match="greedy decoding keeps one hypothesis, got beam size 3"):
        DecodingStrategy("greedy", 3)
    with pytest.raises(ValueError, match="unknown decoding strategy 'sample'; one of greedy, beam, sampling"):
        DecodingStrategy("sample", 1)
    for bad in (2.0, True, "4"):
        with pytest.raises(TypeError, match="beam size must be an int"):
            DecodingStrategy.from_beam_size(bad)


def test_as_strategy_checks_the_user_range_with_input_error():
    assert as_strategy(1) == DecodingStrategy.greedy()
    assert as_strategy(5) == DecodingStrategy.beam(5)
    s = DecodingStrategy.beam(3)
    assert as_strategy(s) is s
    for bad in (0, MAX_BEAM + 1, DecodingStrategy.beam(MAX_BEAM + 1), 2.5):
        with pytest.raises(InputError, match=f"beam size must be between 1 and {MAX_BEAM}"):
            as_strategy(bad)


def test_greedy_search_finds_nothing_ahead(ck):
    assert DecodingStrategy.greedy().search(ck.model, ck.src_tokenizer, SENTENCES[0]) == []


# ---------- same tokens as the beam-size paths ----------
def old_greedy_ids(ck, text: str, prefix: list[int] | None = None) -> list[int]:
    """The former ``beam == 1`` branch of translate, written out: force the prefix, then argmax."""
    s = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, text)
    force_prefix(s, prefix or [])
    while not s.finished:
        s.step()
    return [st.token_id for st in s.steps]


@pytest.mark.parametrize("text", SENTENCES)
def test_greedy_strategy_gives_the_same_tokens_as_beam_1(ck, text):
    want = old_greedy_ids(ck, text)
    assert len(want) >= 1
    via_int = translate(ck, text, beam=1)
    via_strategy = translate(ck, text, beam=DecodingStrategy.greedy())
    assert [s.token_id for s in via_int.steps] == [s.token_id for s in via_strategy.steps] == want
    assert via_strategy.translation == via_int.translation
    assert (via_strategy.mode, via_strategy.beam, via_strategy.hypotheses, via_strategy.beam_trace) == ("greedy", 1, [], [])
    assert via_strategy.logprob == via_int.logprob
    torch.testing.assert_close(via_strategy.maps.cross, via_int.maps.cross, atol=0, rtol=0)


def test_greedy_strategy_with_a_prefix_gives_the_same_tokens(ck):
    prefix = "Please sit."
    ids = ck.tgt_tokenizer.encode(prefix).ids
    r = translate(ck, SENTENCES[0], beam=DecodingStrategy.greedy(), prefix=prefix)
    assert [s.token_id for s in r.steps] == old_greedy_ids(ck, SENTENCES[0], ids)
    assert [s.forced for s in r.steps[: len(ids)]] == [True] * len(ids)
    assert [s.token_id for s in translate(ck, SENTENCES[0], beam=1, prefix=prefix).steps] == [s.token_id for s in r.steps]


@pytest.mark.parametrize("k", [2, 3])
def test_beam_strategy_gives_the_same_tokens_as_the_beam_size(ck, k):
    text = SENTENCES[1]
    best = beam_search(ck.model, ck.src_tokenizer, text, beam=k)[0]
    want = best.ids + ([] if best.truncated else [ck.config.eos_id])
    via_int = translate(ck, text, beam=k)
    via_strategy = translate(ck, text, beam=DecodingStrategy.beam(k))
    assert [s.token_id for s in via_int.steps] == [s.token_id for s in via_strategy.steps] == want
    assert (via_strategy.mode, via_strategy.beam) == ("beam", k)
    assert via_strategy.hypotheses == via_int.hypotheses and len(via_strategy.beam_trace) >= 1


@pytest.mark.parametrize("beam", [1, 3])
def test_live_decoder_with_a_strategy_steps_the_same_tokens(ck, beam):
    text = SENTENCES[0]
    strategy = DecodingStrategy.from_beam_size(beam)
    a, b = LiveDecoder(ck, text, beam=beam), LiveDecoder(ck, text, beam=strategy)
    assert (a.strategy, a.beam, b.strategy, b.beam) == (strategy, beam, strategy, beam)
    a.seek(10**9)
    b.seek(10**9)
    ids = [s.token_id for s in b.state().result.steps]
    assert ids == [s.token_id for s in a.state().result.steps] == [s.token_id for s in translate(ck, text, beam=beam).steps]
    assert b.state().result.mode == ("greedy" if beam == 1 else "beam")


def test_live_choose_path_needs_a_strategy_that_searches(ck):
    with pytest.raises(InputError, match="hypotheses exist only with beam search"):
        LiveDecoder(ck, SENTENCES[0], beam=DecodingStrategy.greedy()).choose_path([5])


def test_corpus_greedy_strategy_equals_batched_greedy_and_beam_1(ck):
    want = [ck.tgt_tokenizer.decode(ids) for ids in greedy_batch(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, SENTENCES)]
    assert translate_corpus(ck, SENTENCES, beam=DecodingStrategy.greedy()) == translate_corpus(ck, SENTENCES, beam=1) == want
    beam2 = [ck.tgt_tokenizer.decode(beam_search(ck.model, ck.src_tokenizer, s, beam=2)[0].ids) for s in SENTENCES]
    assert translate_corpus(ck, SENTENCES, beam=DecodingStrategy.beam(2)) == beam2
