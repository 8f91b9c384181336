"""Beam search as production decoders do it: top-2k candidates, finished hypotheses leave the beam
without taking a slot, an exact stopping rule under the GNMT length penalty, deterministic ties,
beam 1 == greedy, and on the shipped model beam >= greedy under ``sequence_score``."""

from __future__ import annotations

import math

import pytest
import torch

from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.beam import beam_search, length_penalty, sequence_score, top_candidates
from core.decoding.session import DecodeSession, prepare_source
from core.defaults import MAX_BEAM
from core.errors import InputError
from tests.core.test_decoding import SENTENCES, Scripted
from tests.support import shipped

EOS, A, C, X, Y = 2, 10, 11, 12, 13


@pytest.fixture(scope="module")
def ck(tiny_checkpoint):
    return load_checkpoint(tiny_checkpoint, device="cpu")


def test_top_candidates_order_ties_by_row_then_token_also_at_the_cut():
    g = torch.Generator().manual_seed(0)
    for _ in range(20):
        scores = torch.randint(-3, 1, (4, 9), generator=g).float()  # many exact ties
        for n in (1, 3, 8):
            want = sorted(((float(v), i) for i, v in enumerate(scores.flatten().tolist())), key=lambda p: (-p[0], p[1]))
            assert top_candidates(scores, n) == want[:n]


def test_finished_hypotheses_do_not_take_beam_slots(ck):
    # Step 1's two best candidates both end with EOS. A shrinking beam stops there; with top-2k the
    # two live slots go on, and the longer a, y, y, y (alpha 1) scores better.
    def script(t, prev):
        if t == 0:
            return {A: 0.5, C: 0.45}
        if t == 1:
            return {EOS: 0.55, Y: 0.44} if prev == A else {EOS: 0.6, X: 0.39}
        return {Y: 0.99} if t < 4 else {EOS: 0.99}

    model = Scripted(ck.model, script)
    hyps = beam_search(model, ck.src_tokenizer, SENTENCES[0], beam=2, alpha=1.0)
    best = hyps[0]
    assert best.ids == [A, Y, Y, Y] and not best.truncated
    want_lp = math.log(0.5 * 0.44 * 0.99 * 0.99 * 0.99)
    assert abs(best.logprob - want_lp) < 1e-4
    assert abs(best.score - want_lp / length_penalty(5, 1.0)) < 1e-4
    short = math.log(0.5 * 0.55) / length_penalty(2, 1.0)  # what a shrinking beam would return
    assert best.score > short


def test_stopping_rule_is_exact_under_the_length_penalty(ck):
    # After step 1, [a] is finished with score -0.60 and the live c, x has log P -0.90: a bound that
    # assumes it ends at the next step (-0.90 / lp(3) = -0.68) would stop, but the c, x, x, ... chain
    # ends at length 9 with -0.97 / lp(9) = -0.41.
    def script(t, prev):
        if t == 0:
            return {A: 0.5, C: 0.45}
        if prev == A:
            return {EOS: 0.99}
        if t == 1:
            return {X: 0.9}
        return {X: 0.99} if t < 8 else {EOS: 0.99}

    model = Scripted(model=ck.model, script=script)
    best = beam_search(model, ck.src_tokenizer, SENTENCES[0], beam=2, alpha=1.0, n_best=1)
    assert best[0].ids == [C] + [X] * 7
    want_lp = math.log(0.45 * 0.9) + 7 * math.log(0.99)
    assert abs(best[0].score - want_lp / length_penalty(9, 1.0)) < 1e-4
    finished_a = math.log(0.5 * 0.99) / length_penalty(2, 1.0)
    assert finished_a >= math.log(0.45 * 0.9) / length_penalty(3, 1.0)  # the naive bound would have stopped


def test_beam_one_is_greedy_and_results_are_repeatable(ck):
    for text in SENTENCES:
        s = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, text)
        s.run()
        ids = s.output_ids if s.truncated else s.output_ids[:-1]
        assert beam_search(ck.model, ck.src_tokenizer, text, beam=1)[0].ids == ids
        a = beam_search(ck.model, ck.src_tokenizer, text, beam=5)
        b = beam_search(ck.model, ck.src_tokenizer, text, beam=5)
        assert [(h.ids, h.score) for h in a] == [(h.ids, h.score) for h in b]


@pytest.mark.parametrize("beam", [0, MAX_BEAM + 1])
def test_beam_size_out_of_range_is_one_clear_error(ck, beam):
    with pytest.raises(InputError, match=f"between 1 and {MAX_BEAM}"):
        beam_search(ck.model, ck.src_tokenizer, SENTENCES[0], beam=beam)


# Tatoeba-test sentences where the old shrinking beam scored below greedy (python -m bench.beam_scan,
# before the rebuild); the first is the example (greedy -4.95, old beam 2 -5.95).
SHIPPED_SENTENCES = [
    "8시간 동안 운전을 한 후에 톰은 더이상 운전을 할 수 없었다.",
    "이유를 물어봐도 돼?",
    "메세지를 전해 드릴까요?",
    "아침식사는 오전 7시에 제공됩니다.",
    "브라질은 남미에서 가장 큰 나라입니다.",
    "수신자부담전화 1-800-446-2581을 이용해주세요.",
]


@pytest.fixture(scope="module")
def real():
    path = shipped()
    if not (path / "model.safetensors").exists():
        pytest.skip(f"no shipped checkpoint at {path}")
    return load_checkpoint(path, device="cpu")


@pytest.mark.parametrize("text", SHIPPED_SENTENCES)
def test_shipped_model_beam_never_scores_below_greedy(real, text):
    c = real.config
    src = prepare_source(text, real.src_tokenizer, c.max_len, c.eos_id, c.pad_id).ids
    s = DecodeSession(real.model, real.src_tokenizer, real.tgt_tokenizer, text)
    s.run()
    g_ids = s.output_ids if s.truncated else s.output_ids[:-1]
    greedy = sequence_score(real.model, src, g_ids, 0.6, eos=not s.truncated)
    for k in (2, 4, 8):
        best = beam_search(real.model, real.src_tokenizer, text, beam=k, alpha=0.6)[0]
        rescored = sequence_score(real.model, src, best.ids, 0.6, eos=not best.truncated)
        assert abs(rescored - best.score) < 1e-3  # the search's score is the objective
        assert rescored >= greedy - 1e-4, (k, rescored, greedy)
