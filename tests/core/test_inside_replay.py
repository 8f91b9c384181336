"""core.analysis.inside.inside_of_result: the inside of a step of a result already decoded (the
app's live session, forced tokens and beam paths included) equals that result's own map row."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from core.analysis.inside import inside_of_result
from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.live import LiveDecoder
from core.decoding.translate import translate
from core.errors import InputError

TEXT = "집에 누군가 있어?"


@pytest.fixture(scope="module")
def ck(tiny_checkpoint):
    return load_checkpoint(tiny_checkpoint, device="cpu")


@pytest.mark.parametrize("beam", [1, 3])
def test_forked_live_result_replays_exactly(ck, beam):
    live = LiveDecoder(ck, TEXT, beam=beam, pad_to=11)
    live.seek(2)
    first = live.state().result.steps[1].token_id
    other = next(i for i in range(4, ck.tgt_tokenizer.vocab_size) if i != first)
    live.fork(2, [other])  # "what if the model had said …?" at step 2, decoding continues
    live.seek(4)
    r = live.state().result
    assert r.steps[1].token_id == other and len(r.steps) == 4
    for kind, full in (("dec", r.maps.decoder_self), ("cross", r.maps.cross)):
        for query in (2, 4):
            st = inside_of_result(ck, r, kind, 2, 3, query)
            row = full[1, 2, query - 1]
            assert torch.equal(st.weights, row[: st.weights.numel()]) and not row[st.weights.numel() :].any()
            q, k, v = st.q.double().numpy(), st.k.double().numpy(), st.v.double().numpy()
            assert np.allclose(st.scores.numpy(), k @ q / math.sqrt(q.size), atol=1e-5)
            assert np.allclose(st.output.numpy(), st.weights.double().numpy() @ v, atol=1e-5)
            if kind == "cross":  # the padded source keys: masked, −inf, weight exactly 0
                assert torch.equal(st.mask, r.maps.applied.cross[query - 1])
                assert st.mask.sum() == 11 - r.source.n_real and (st.weights[st.mask] == 0).all()
                assert torch.isneginf(st.masked_scores[st.mask]).all()


def test_errors_are_one_line_input_errors(ck):
    tf = translate(ck, TEXT, reference="Is anyone home?")
    with pytest.raises(InputError, match="not on teacher_forced"):
        inside_of_result(ck, tf, "cross", 1, 1, 1)
    r = translate(ck, TEXT)
    for args, msg in (
        (("enc", 3, 1, 1), "layer 3 out of range"),
        (("dec", 1, 5, 1), "head 5 out of range"),
        (("cross", 1, 1, 99), "query 99 out of range"),
        (("self", 1, 1, 1), "unknown attention kind"),
    ):
        with pytest.raises(InputError, match=msg):
            inside_of_result(ck, r, *args)
