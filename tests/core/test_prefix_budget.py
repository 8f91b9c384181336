"""A forced prefix does not eat the output budget: after the prefix the model may say as many
tokens as it may without one (max new tokens counted after the prefix, as OpenNMT-py and
CTranslate2 count it), in greedy decoding, beam search, the CLI and the live decoder. The model's
``max_len`` positions stay a hard cap."""

from __future__ import annotations

import dataclasses
import json

import pytest

from core.__main__ import main as cli
from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.beam import beam_search
from core.decoding.live import LiveDecoder
from core.decoding.session import DecodeSession, max_output_steps
from core.decoding.translate import translate
from tests.core.test_decoding import Scripted
from tests.support import FIXTURES

SOURCE = "네"  # one source token + EOS: the budget without a prefix is 2·2 + 10 = 14


@pytest.fixture(scope="module")
def ck(tiny_checkpoint):
    return load_checkpoint(tiny_checkpoint, device="cpu")


def base_budget(ck) -> int:
    s = DecodeSession(ck.model, ck.src_tokenizer, ck.tgt_tokenizer, SOURCE)
    return max_output_steps(s.source.n_real, ck.config.max_len)


def long_prefix(ck, more: int = 3) -> tuple[str, list[int]]:
    """English text from the fixtures whose target ids are at least ``more`` longer than the budget
    without a prefix (the budget that the prefix used to eat whole)."""
    words, budget = [], base_budget(ck)
    for word in " ".join((FIXTURES / "tiny.en").read_text(encoding="utf-8").split()).split():
        words.append(word)
        ids = ck.tgt_tokenizer.encode(" ".join(words)).ids
        if len(ids) >= budget + more:
            return " ".join(words), ids
    raise AssertionError("the fixtures are too short for the prefix")


def never_eos(ck, max_len: int | None = None):
    """The tiny model with its next-token distribution replaced by a script that never says EOS
    (so every output runs to its budget); ``max_len`` shrinks the config's positions."""
    model = Scripted(ck.model, lambda t, prev: {12: 0.99})
    if max_len is not None:
        model.config = dataclasses.replace(ck.config, max_len=max_len)
    return dataclasses.replace(ck, model=model, config=model.config)


def test_output_budget_counts_after_the_prefix_and_is_capped_by_max_len():
    from core.decoding.session import output_budget

    assert output_budget(2, 64) == max_output_steps(2, 64) == 14
    assert output_budget(2, 64, 17) == 17 + 14
    assert output_budget(2, 24, 17) == 23  # max_len - 1 decoder positions at most
    assert output_budget(2, 24, 40) == 23


def test_greedy_says_a_full_budget_after_a_prefix_longer_than_the_old_budget(ck):
    text, ids = long_prefix(ck)
    budget = base_budget(ck)
    assert len(ids) > budget  # the prefix alone used to spend the whole budget
    m = never_eos(ck)
    plain = translate(m, SOURCE)
    r = translate(m, SOURCE, prefix=text)
    assert [s.token_id for s in r.steps[: len(ids)]] == ids and all(s.forced for s in r.steps[: len(ids)])
    free = r.steps[len(ids) :]
    assert len(free) == len(plain.steps) == budget and not any(s.forced for s in free)
    assert "fit the output budget" not in r.notice
    assert f"{budget} tokens after the {len(ids)}-token prefix" in r.notice  # ran out without EOS


def test_real_model_speaks_after_a_long_prefix(ck):
    """The unscripted tiny model: at least one free step after the prefix (a word or EOS)."""
    text, ids = long_prefix(ck)
    for beam in (1, 2):
        r = translate(ck, SOURCE, prefix=text, beam=beam)
        free = r.steps[len(ids) :]
        assert free and not any(s.forced for s in free)
        assert len(free) <= base_budget(ck)
        assert free[-1].token_id == ck.config.eos_id or len(free) == base_budget(ck)


def test_beam_budget_after_the_prefix_equals_the_budget_without_one(ck):
    text, ids = long_prefix(ck)
    m = never_eos(ck)
    budget = base_budget(ck)
    hyps = beam_search(m.model, m.src_tokenizer, SOURCE, beam=2, prefix=ids)
    assert hyps and all(h.truncated and h.ids[: len(ids)] == ids and len(h.ids) == len(ids) + budget for h in hyps)
    assert len(beam_search(m.model, m.src_tokenizer, SOURCE, beam=2)[0].ids) == budget
    r = translate(m, SOURCE, beam=2, prefix=text)
    assert len(r.steps) == len(ids) + budget and sum(s.forced for s in r.steps) == len(ids)


def test_live_fork_counts_the_budget_after_the_forced_tokens(ck):
    text, ids = long_prefix(ck)
    m = never_eos(ck)
    budget = base_budget(ck)
    for beam in (1, 2):
        live = LiveDecoder(m, SOURCE, beam=beam)
        live.seek(10**9)
        assert len(live.state().result.steps) == live.state().budget == budget
        live.fork(3, ids)  # outputs 1-2 are the model's own, 3.. forced: the prefix is 2 + len(ids) long
        st = live.state()
        assert st.finished and st.budget == 2 + len(ids) + budget
        assert len(st.result.steps) == st.budget and [s.forced for s in st.result.steps].count(True) == len(ids)
        assert not any(s.forced for s in st.result.steps[2 + len(ids) :])
        live.unfork()  # back on the original path, with the budget without a prefix
        live.seek(10**9)
        assert live.state().budget == len(live.state().result.steps) == budget


def test_max_len_still_caps_the_output_with_a_notice(ck):
    text, ids = long_prefix(ck)
    small = never_eos(ck, max_len=len(ids) + 4)  # room for the prefix and 3 free tokens
    r = translate(small, SOURCE, prefix=text)
    assert len(r.steps) == len(ids) + 3 and not any(s.forced for s in r.steps[len(ids) :])
    tiny = never_eos(ck, max_len=len(ids) - 2)  # not even the prefix fits
    r = translate(tiny, SOURCE, prefix=text)
    assert len(r.steps) == len(ids) - 3 and all(s.forced for s in r.steps)
    assert f"the prefix has {len(ids)} tokens; only {len(ids) - 3} fit" in r.notice


def test_cli_prefix_leaves_the_model_its_budget(ck, tiny_checkpoint, capsys):
    text, ids = long_prefix(ck)
    assert cli(["translate", SOURCE, "--checkpoint", str(tiny_checkpoint), "--prefix", text, "--json"]) == 0
    out = capsys.readouterr()
    d = json.loads(out.out)
    forced = [s["forced"] for s in d["steps"]]
    assert forced[: len(ids)] == [True] * len(ids) and len(forced) > len(ids) and not any(forced[len(ids) :])
    assert "fit the output budget" not in out.err


def test_a_prefix_whose_last_word_the_model_extends_says_so():
    from core.checkpoints.checkpoint import load_checkpoint
    from core.decoding.translate import translate
    from tests.support import shipped

    ck = load_checkpoint(shipped(), device="cpu")
    r = translate(ck, "사과 주세요.", prefix="He")
    assert r.translation.startswith("He")
    first_free = r.steps[1].token  # the token after the forced "▁He"
    if first_free.startswith("▁") or not first_free[:1].isalnum():
        assert r.notice is None or "continued the prefix's last word" not in r.notice
    else:  # "Help me …": the word asked for is not the word written, and the notice says so
        assert "continued the prefix's last word ('He' + " in r.notice
    r = translate(ck, "사과 주세요.", prefix="Please")
    assert "continued the prefix's last word" not in (r.notice or "")
