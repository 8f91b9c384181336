"""The pieces that make batched text-only decoding fast give the values of the plain computation:
the output projection in vocabulary blocks (bit-identical), cross-attention shared by a sentence's
beam rows (equal to the keys copied per row), the self-attention cache reordered by one gather, and
the greedy hypothesis riding along with the beam (the batched beam still equals beam_search alone,
also where the greedy hypothesis leaves the beam and where it wins)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import core.decoding.text_beam as text_beam
from core.decoding.beam import beam_search
from core.decoding.session import prepare_source
from core.transformer.kv_cache import LayerCache
from core.transformer.layers import DecoderLayer
from core.transformer.model import Transformer
from core.transformer.vocab_projection import BLOCK, MIN_ROWS, MIN_ROWS_COLUMN_MAJOR, project_vocab
from tests.support import FIXTURES, tiny_config


@pytest.mark.parametrize("column_major", [False, True])
@pytest.mark.parametrize("rows", [1, 2, 3, MIN_ROWS_COLUMN_MAJOR, 7, 16, 37, 128])
def test_vocabulary_blocks_give_exactly_the_plain_projection(column_major, rows):
    """A realistic width (d_model 512, 8,000 pieces: the last block shorter than the others), the row
    counts the batched decoders use (greedy 1-32, beam 4-128): equal to one F.linear, bit for bit."""
    torch.manual_seed(0)
    gen = nn.Linear(512, 8000, bias=False)
    if column_major:
        gen.weight = nn.Parameter(gen.weight.detach().t().contiguous().t())
    x = torch.randn(rows, 1, 512)
    with torch.inference_mode():
        got = project_vocab(gen, x)
        want = torch.nn.functional.linear(x, gen.weight)
    assert 8000 % BLOCK and got.shape == (rows, 1, 8000)
    assert torch.equal(got, want)


def test_vocabulary_blocks_at_opus_width_with_a_column_major_weight_and_few_rows():
    """65,001 pieces (OPUS-MT): a column-major weight takes one call below MIN_ROWS_COLUMN_MAJOR rows
    (where blocks need not be bit-identical), blocks from there on; the same values either way."""
    torch.manual_seed(3)
    weight = torch.randn(512, 65001).t()  # [V, D], column-major
    gen = nn.Linear(512, 65001, bias=False, device="meta")
    gen.weight = nn.Parameter(weight, requires_grad=False)
    with torch.inference_mode():
        for rows in (2, 3, MIN_ROWS_COLUMN_MAJOR):
            x = torch.randn(rows, 512)
            assert torch.equal(project_vocab(gen, x), torch.nn.functional.linear(x, weight))


def test_vocabulary_blocks_written_into_a_buffer_give_the_same_logits_in_its_first_rows():
    torch.manual_seed(7)
    gen = nn.Linear(64, 3 * BLOCK + 123, bias=False)
    bias = torch.randn(3 * BLOCK + 123)
    x = torch.randn(5, 1, 64)
    buffer = torch.full((9, 3 * BLOCK + 123), float("nan"))
    with torch.inference_mode():
        got = project_vocab(gen, x, bias, buffer)
        want = gen(x) + bias
        one = project_vocab(gen, x[:1], bias, buffer)  # one call: the buffer is not used
        want_one = gen(x[:1]) + bias
    assert got.shape == (5, 1, 3 * BLOCK + 123) and got.data_ptr() == buffer.data_ptr()
    assert torch.equal(got, want) and torch.equal(buffer[:5], want[:, 0])
    assert one.data_ptr() != buffer.data_ptr() and torch.equal(one, want_one)
    assert bool(buffer[5:].isnan().all())  # rows past x's: untouched


def test_cross_attention_shared_by_grouped_rows_equals_keys_copied_per_row():
    torch.manual_seed(1)
    layer = DecoderLayer(tiny_config()).eval()
    b_src, r, s_len = 3, 4, 7
    memory = torch.randn(b_src, s_len, 32)
    mask = torch.zeros(b_src, 1, 1, s_len, dtype=torch.bool)
    mask[0, ..., 5:] = True  # True = pad key
    h = torch.randn(b_src * r, 1, 32)
    with torch.inference_mode():
        k, v = layer.cross_attn.project_kv(memory)
        rows = torch.arange(b_src).repeat_interleave(r)
        out, w = layer.cross_attention(h, k, v, mask, need_weights=True)
        want, w_want = layer.cross_attention(h, k[rows], v[rows], mask[rows], need_weights=True)
        fast, none = layer.cross_attention(h, k, v, mask)
    assert out.shape == (b_src * r, 1, 32) and w is not None and w.shape == (b_src * r, 4, 1, s_len)
    torch.testing.assert_close(out, want, rtol=0, atol=1e-6)
    torch.testing.assert_close(fast, want, rtol=0, atol=1e-6)
    torch.testing.assert_close(w, w_want, rtol=0, atol=1e-7)
    assert none is None and float(w[:r, ..., 5:].abs().sum()) == 0.0  # pad keys of sentence 0: exact zeros
    with pytest.raises(ValueError, match="cannot share the keys"):
        layer.cross_attention(torch.randn(b_src * r + 1, 1, 32), k, v, mask)


def test_cross_attention_with_shared_sentences_then_rows_of_their_own_equals_keys_copied_per_row():
    """A batched beam's hypotheses (r rows per sentence, keys shared) followed by greedy rows with a
    source each, in one call (``shared=(n, r)``): the values of the keys copied per row."""
    torch.manual_seed(6)
    layer = DecoderLayer(tiny_config()).eval()
    n, r, n_own, s_len = 3, 2, 2, 6
    memory = torch.randn(n + n_own, s_len, 32)
    mask = torch.zeros(n + n_own, 1, 1, s_len, dtype=torch.bool)
    mask[1, ..., 4:] = True  # True = pad key
    mask[n + 1, ..., 3:] = True
    h = torch.randn(n * r + n_own, 1, 32)
    with torch.inference_mode():
        k, v = layer.cross_attn.project_kv(memory)
        rows = torch.cat([torch.arange(n).repeat_interleave(r), torch.arange(n, n + n_own)])
        out, w = layer.cross_attention(h, k, v, mask, need_weights=True, shared=(n, r))
        want, w_want = layer.cross_attention(h, k[rows], v[rows], mask[rows], need_weights=True)
        fast, _ = layer.cross_attention(h, k, v, mask, shared=(n, r))
    assert out.shape == (n * r + n_own, 1, 32) and w is not None and w.shape == (n * r + n_own, 4, 1, s_len)
    torch.testing.assert_close(out, want, rtol=0, atol=1e-6)
    torch.testing.assert_close(fast, want, rtol=0, atol=1e-6)
    torch.testing.assert_close(w, w_want, rtol=0, atol=1e-7)
    assert float(w[n * r + 1, ..., 3:].abs().sum()) == 0.0  # the second own row's pad keys: exact zeros


def test_reorder_gathers_the_rows_and_appends_in_place():
    torch.manual_seed(2)
    cache = LayerCache(torch.zeros(3, 2, 0, 4), torch.zeros(3, 2, 0, 4), torch.randn(3, 2, 5, 4), torch.randn(3, 2, 5, 4))
    with torch.inference_mode():
        for _ in range(3):
            cache = cache.append(torch.randn(3, 2, 1, 4), torch.randn(3, 2, 1, 4))
        index = torch.tensor([2, 2, 0])
        cross_k, cross_v = torch.randn(1, 2, 5, 4), torch.randn(1, 2, 5, 4)
        got = cache.reorder(index, cross_k, cross_v)
        assert torch.equal(got.self_k, cache.self_k[index]) and torch.equal(got.self_v, cache.self_v[index])
        assert got.cross_k is cross_k and got.cross_v is cross_v
        k_new = torch.randn(3, 2, 1, 4)
        nxt = got.append(k_new, k_new)
        assert nxt.self_k.data_ptr() == got.self_k.data_ptr()  # written into the gathered storage
        assert torch.equal(nxt.self_k, torch.cat([cache.self_k[index], k_new], 2))


@pytest.fixture(scope="module")
def eos_model(tiny_tokenizers):
    """A tiny random model whose EOS is likely at some steps only (outputs of many lengths)."""
    src_tok, tgt_tok = tiny_tokenizers
    torch.manual_seed(5)  # (a seed where the greedy hypothesis leaves the beam and, once, wins at beam 2)
    cfg = tiny_config(
        src_vocab_size=src_tok.vocab_size,
        tgt_vocab_size=tgt_tok.vocab_size,
        final_logits_bias=True,
        never_output_pad=True,
        decoder_start_id=0,
    )
    model = Transformer(cfg).eval()
    with torch.no_grad():
        model.final_logits_bias[cfg.eos_id] = 3.0
        model.generator.weight[cfg.eos_id] *= 3.0
    return model, src_tok


def test_greedy_riding_along_leaves_the_beam_and_wins_as_alone(eos_model, monkeypatch):
    model, tok = eos_model
    k = 2
    c = model.config
    texts = (FIXTURES / "tiny.ko").read_text(encoding="utf-8").splitlines()[:24]
    alone = [beam_search(model, tok, t, beam=k, n_best=1)[0] for t in texts]
    plain = [beam_search(model, tok, t, beam=k, n_best=1, keep_greedy=False)[0] for t in texts]
    split: list[int] = []
    real = text_beam._Greedy.split_off

    def spy(self, i, *args):
        split.append(i)
        return real(self, i, *args)

    monkeypatch.setattr(text_beam._Greedy, "split_off", spy)
    srcs = [prepare_source(t, tok, c.max_len, c.eos_id, c.pad_id) for t in texts]
    got = text_beam.beam_hypotheses(model, srcs, k)
    assert split  # some greedy hypotheses left the beam and decoded on rows of their own
    assert any(a.ids != p.ids for a, p in zip(alone, plain))  # and the greedy hypothesis won somewhere
    assert [(h.ids, h.truncated) for h in got] == [(h.ids, h.truncated) for h in alone]
    assert [h.score for h in got] == pytest.approx([h.score for h in alone], abs=1e-5)


@pytest.mark.parametrize("rows", [MIN_ROWS, 37])
def test_vocabulary_blocks_with_a_logits_bias_give_exactly_the_product_plus_bias(rows):
    torch.manual_seed(2)
    gen = nn.Linear(64, 3 * BLOCK + 123, bias=False)
    bias = torch.randn(3 * BLOCK + 123)
    x = torch.randn(rows, 1, 64)
    with torch.inference_mode():
        got = project_vocab(gen, x, bias)
        want = gen(x) + bias
        one = project_vocab(gen, x[:1], bias)  # fewer than MIN_ROWS: one call, then the bias
    assert torch.equal(got, want)
    assert torch.equal(one, gen(x[:1]) + bias)


def test_encoding_in_groups_gives_the_same_values_for_sorted_and_shuffled_rows():
    """Length-sorted rows are written group by group with slices, any other order by index: the same
    memory and cross-attention keys and values per sentence, exactly 0 past each group's longest sentence."""
    from core.decoding.session import Source
    from core.decoding.text_encode import _source_batch, encode_grouped, length_groups

    torch.manual_seed(4)
    model = Transformer(tiny_config()).eval()
    lengths = [3, 4, 4, 9, 10, 22, 23]  # three groups at most 10 % padding
    sources = [Source(text="", tokens=[], ids=torch.randint(4, 40, (n,)).tolist(), n_real=n) for n in lengths]
    order = [4, 0, 6, 2, 5, 1, 3]
    with torch.inference_mode():
        src, kpm = _source_batch(model, sources)
        memory, cache = encode_grouped(model, src, kpm)
        src_s, kpm_s = _source_batch(model, [sources[i] for i in order])
        memory_s, cache_s = encode_grouped(model, src_s, kpm_s)
    assert cache is not None and cache_s is not None
    assert torch.equal(memory[order], memory_s)
    for lc, lc_s in zip(cache, cache_s):
        assert torch.equal(lc.cross_k[order], lc_s.cross_k) and torch.equal(lc.cross_v[order], lc_s.cross_v)
    groups = length_groups(lengths)
    assert len(groups) > 1
    for g in groups:  # past the group's longest sentence: exact zeros
        n = max(lengths[i] for i in g)
        assert float(memory[g, n:].abs().sum()) == 0.0 and float(memory[g[-1], n - 1].abs().sum()) > 0.0
        assert all(float(lc.cross_k[g, :, n:].abs().sum()) == 0.0 for lc in cache)
