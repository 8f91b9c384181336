"""Text-only batched translation: greedy and beam in length-sorted batches give exactly the tokens of
the one-sentence paths (translate(), beam_search()), in input order, one result per line."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from core.checkpoints.checkpoint import load_checkpoint, save_checkpoint
from core.decoding.beam import beam_search
from core.decoding.session import prepare_source
from core.decoding.text_batch import beam_hypotheses, greedy_hypotheses, length_batches, translate_texts
from core.decoding.translate import translate
from core.errors import InputError
from core.evaluation.evaluate import translate_corpus
from core.transformer.model import Transformer
from tests.support import FIXTURES, ROOT, shipped, tiny_config


def _mixed_sentences() -> list[str]:
    """Korean lines of very different lengths (3 to about 60 source tokens), in no length order."""
    lines = [ln.split("\t")[0] for ln in (FIXTURES / "lecture_sentences.tsv").read_text(encoding="utf-8").splitlines()[1:]]
    short = (FIXTURES / "tiny.ko").read_text(encoding="utf-8").splitlines()
    mixed = []
    for a, b in zip(lines[:5], short[:5]):
        mixed += [a, b]
    mixed.append(" ".join(lines[5:10]))  # one long line
    return mixed


@pytest.fixture(scope="module")
def nc():
    return load_checkpoint(shipped(), device="cpu")


@pytest.fixture(scope="module")
def eos_tiny(tmp_path_factory, tiny_tokenizers):
    """A tiny random model whose EOS gets a logit bias, so its outputs end at many different lengths
    (some at the output budget), with OPUS-MT's conventions: decoder start = pad, pad never output."""
    src_tok, tgt_tok = tiny_tokenizers
    torch.manual_seed(3)
    cfg = tiny_config(
        src_vocab_size=src_tok.vocab_size,
        tgt_vocab_size=tgt_tok.vocab_size,
        final_logits_bias=True,
        never_output_pad=True,
        decoder_start_id=0,
    )
    model = Transformer(cfg).eval()
    with torch.no_grad():  # EOS's logit: a bias and a larger output row, so it wins at some steps only
        model.final_logits_bias[cfg.eos_id] = 3.0
        model.generator.weight[cfg.eos_id] *= 3.0
    return load_checkpoint(save_checkpoint(tmp_path_factory.mktemp("eos") / "m", model, src_tok, tgt_tok), device="cpu")


def test_length_batches_sort_by_length_and_respect_both_limits():
    lengths = [5, 2, 9, 2, 7, 3]
    assert length_batches(lengths, 2) == [[1, 3], [5, 0], [4, 2]]
    assert length_batches(lengths, 10, max_tokens=14) == [[1, 3, 5], [0, 4], [2]]  # 3×3 ≤ 14 < 4×5; 2×7 ≤ 14 < 3×9
    assert length_batches([20], 4, max_tokens=8) == [[0]]  # a longer sentence still gets its own batch
    assert length_batches([], 4) == []
    with pytest.raises(InputError, match="--batch-size must be at least 1, got 0"):
        length_batches([1], 0)
    with pytest.raises(InputError, match="--max-tokens must be at least 1, got 0"):
        length_batches([1], 4, 0)


def _alone_beam(ck, texts, k):
    return [beam_search(ck.model, ck.src_tokenizer, t, beam=k, n_best=1)[0] for t in texts]


def _sources(ck, texts):
    c = ck.model.config
    return [prepare_source(t, ck.src_tokenizer, c.max_len, c.eos_id, c.pad_id) for t in texts]


def test_batched_greedy_equals_each_sentence_alone_on_the_shipped_model(nc):
    texts = _mixed_sentences()
    lengths = {len(s.ids) for s in _sources(nc, texts)}
    assert min(lengths) <= 6 and max(lengths) >= 40  # really mixed: heavy padding in each batch
    alone = [translate(nc, t) for t in texts]
    for batch_size, max_tokens in ((4, None), (64, None), (8, 60)):
        got = translate_texts(nc, texts, 1, batch_size=batch_size, max_tokens=max_tokens)
        assert [r.translation for r in got] == [a.translation for a in alone]
        eos = nc.model.config.eos_id
        assert [list(r.ids) for r in got] == [[s.token_id for s in a.steps if s.token_id != eos] for a in alone]
        for r, a in zip(got, alone):
            assert r.n_tokens == len(a.steps) and r.notice == a.notice
            assert r.logprob == pytest.approx(a.logprob, abs=1e-3)


def test_batched_beam_equals_beam_search_alone_on_the_shipped_model(nc):
    texts = _mixed_sentences()
    want = _alone_beam(nc, texts, 4)
    got = translate_texts(nc, texts, 4, batch_size=6)
    assert [list(r.ids) for r in got] == [h.ids for h in want]
    assert [r.truncated for r in got] == [h.truncated for h in want]
    for r, h in zip(got, want):
        assert r.logprob == pytest.approx(h.logprob, abs=1e-4)
    # and the app path's beam (the best hypothesis replayed with its maps) prints the same text
    for t, r in zip(texts[:2], got[:2]):
        assert translate(nc, t, beam=4).translation == r.translation


@pytest.mark.parametrize("k", [1, 2, 5])
def test_batched_search_equals_alone_with_mixed_endings_and_budgets(eos_tiny, k):
    """Random weights, EOS made likely: some outputs end after 1-3 tokens, others run to their budget
    (truncated); the pad is never output and the decoder starts from the pad id (OPUS-MT)."""
    texts = (FIXTURES / "tiny.ko").read_text(encoding="utf-8").splitlines()[:24]
    srcs = _sources(eos_tiny, texts)
    want = _alone_beam(eos_tiny, texts, k)
    assert len({len(h.ids) for h in want}) >= 3  # outputs of several lengths
    assert any(h.truncated for h in want) and not all(h.truncated for h in want)
    got = beam_hypotheses(eos_tiny.model, srcs, k) if k > 1 else greedy_hypotheses(eos_tiny.model, srcs)
    assert [(h.ids, h.truncated) for h in got] == [(h.ids, h.truncated) for h in want]
    assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=1e-5)
    assert all(eos_tiny.model.config.pad_id not in h.ids for h in got)


def test_without_keep_greedy_batched_beam_is_the_plain_search(eos_tiny):
    texts = (FIXTURES / "tiny.ko").read_text(encoding="utf-8").splitlines()[:12]
    m, tok = eos_tiny.model, eos_tiny.src_tokenizer
    want = [beam_search(m, tok, t, beam=3, n_best=1, keep_greedy=False)[0] for t in texts]
    got = beam_hypotheses(m, _sources(eos_tiny, texts), 3, keep_greedy=False)
    assert [(h.ids, h.truncated) for h in got] == [(h.ids, h.truncated) for h in want]


def test_order_is_kept_and_blank_or_empty_lines_give_empty_results(nc):
    texts = ["고양이가 의자 위에서 자고 있다.", "", "나는 학생입니다.", "   ", "\u200b", "외로워.", "🙂"]
    got = translate_texts(nc, texts, 1, batch_size=2)
    assert len(got) == len(texts) and [r.text for r in got] == texts
    assert [r.translation for r in got][:4] == ["A cat is sleeping on a chair.", "", "I'm a student.", ""]
    assert got[1].error == got[3].error == "" and got[1].ids == ()
    assert got[4].error == "nothing to translate: the input is empty after normalization" and got[4].translation == ""
    assert got[5].translation == translate(nc, "외로워.").translation
    assert got[6].translation == "🙂" and "only symbols" in got[6].notice  # passed through, as the app path does
    assert [r.translation for r in translate_texts(nc, texts, 3, batch_size=3)][:3] == [
        translate(nc, texts[0], beam=3).translation,
        "",
        translate(nc, texts[2], beam=3).translation,
    ]


def test_translate_corpus_is_batched_for_beam_too(eos_tiny):
    texts = ["", *(FIXTURES / "tiny.ko").read_text(encoding="utf-8").splitlines()[:8]]
    want = [""] + [eos_tiny.tgt_tokenizer.decode(h.ids) for h in _alone_beam(eos_tiny, texts[1:], 2)]
    assert translate_corpus(eos_tiny, texts, beam=2, batch_size=3) == want


def test_cli_text_only_path_one_line_out_per_line_in(tiny_checkpoint):
    lines = ["제발 앉아.", "", "집에 누군가 있어?", "\u200b", "외로워.", "감기는 전염돼."]
    data = ("\n".join(lines) + "\n").encode()
    ck = load_checkpoint(tiny_checkpoint, device="cpu")
    for extra in (["--batch-size", "2"], ["--beam", "2", "--batch-size", "4", "--max-tokens", "20"]):
        res = subprocess.run(
            [sys.executable, "-m", "core", "translate", "-", "--checkpoint", str(tiny_checkpoint), *extra],
            input=data,
            cwd=ROOT,
            capture_output=True,
            timeout=300,
        )
        out = res.stdout.decode().split("\n")
        assert out[-1] == "" and len(out) - 1 == len(lines)
        beam = 2 if "--beam" in extra else 1
        want = ["" if not t.strip() or t == "\u200b" else translate(ck, t, beam=beam).translation for t in lines]
        assert out[:-1] == want
        assert res.returncode == 2  # the zero-width-space line: an error, its line left empty
        assert "line 4: error: nothing to translate: the input is empty after normalization" in res.stderr.decode()
