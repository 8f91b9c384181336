"""The inside of one attention step: the weights row equals the map's row exactly, the
scores equal q·k/√d_k from the returned q and k (numpy), softmax of the masked scores gives the
weights, the output is Σ weights·v; the positional-encoding matrix is the one the model adds."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from core.__main__ import main as cli
from core.analysis.inside import inside_step, positional_matrix
from core.checkpoints.checkpoint import load_checkpoint
from core.transformer.layers import sinusoid_table

TEXT = "집에 누군가 있어?"


@pytest.fixture(scope="module")
def ck(tiny_checkpoint):
    return load_checkpoint(tiny_checkpoint, device="cpu")


@pytest.mark.parametrize(
    "kind, layer, head, query, kw",
    [
        ("enc", 2, 3, 2, {"pad_to": 12}),
        ("dec", 1, 2, 3, {}),
        ("cross", 2, 4, 2, {"pad_to": 12}),
        ("cross", 1, 1, 1, {"beam": 3}),
    ],
)
def test_inside_step_against_numpy(ck, kind, layer, head, query, kw):
    st, r = inside_step(ck, TEXT, kind, layer, head, query, **kw)
    full = {"enc": r.maps.encoder_self, "dec": r.maps.decoder_self, "cross": r.maps.cross}[kind]
    row = full[layer - 1, head - 1, query - 1]
    n = st.weights.numel()
    assert torch.equal(st.weights, row[:n]) and (row[n:] == 0).all()
    q, k, v = st.q.double().numpy(), st.k.double().numpy(), st.v.double().numpy()
    scores = k @ q / math.sqrt(q.size)
    assert np.allclose(st.scores.numpy(), scores, atol=1e-5)
    masked = scores.copy()
    if st.mask is not None:
        masked[st.mask.numpy()] = -np.inf
        assert kind != "dec" and st.mask.any()  # the padded source keys (pad_to 12)
        assert (st.weights[st.mask] == 0).all() and np.isneginf(st.masked_scores[st.mask].numpy()).all()
    e = np.exp(masked - masked.max())
    assert np.allclose(st.weights.numpy(), e / e.sum(), atol=1e-6)
    assert np.allclose(st.output.numpy(), st.weights.double().numpy() @ v, atol=1e-5)
    assert len(st.key_tokens) == n and st.q.numel() == ck.model.config.d_model // ck.model.config.n_heads
    if kind == "dec":
        assert n == query  # cached decoding: only keys up to the query exist


def test_cli_inside_json_and_errors(ck, tiny_checkpoint, capsys):
    base = ["translate", TEXT, "--checkpoint", str(tiny_checkpoint), "--pad-to", "10"]
    assert cli(base + ["--inside", "1:2:3", "--inside-kind", "cross", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    ins = d["inside"]
    assert (ins["kind"], ins["layer"], ins["head"], ins["query"]) == ("cross", 1, 2, 3)
    assert ins["weights"] == pytest.approx(d["attention"]["cross"][0][1][2], abs=2e-6)
    assert [s is None for s in ins["masked_scores"]] == ins["mask"] and any(ins["mask"])
    assert ins["scores"] == pytest.approx((np.array(ins["k"]) @ np.array(ins["q"]) / math.sqrt(ins["d_head"])).tolist(), abs=1e-4)
    for args, msg in (
        (["--inside", "1:5:1", "--json"], "head 5 out of range"),
        (["--inside", "3:1:1", "--json"], "layer 3 out of range"),
        (["--inside", "1:1:99", "--json"], "query 99 out of range"),
        (["--inside", "1:1", "--json"], "layer:head:query"),
        (["--inside", "1:1:1"], "--inside needs --json"),
    ):
        assert cli(base + args) == 2, args
        err = capsys.readouterr().err.strip()
        assert err.startswith("error:") and msg in err and "\n" not in err, err


@pytest.mark.parametrize("positional", ["sinusoidal", "learned"])
def test_positional_matrix_is_what_the_model_adds(positional):
    from core.transformer.model import Transformer
    from tests.support import tiny_config

    torch.manual_seed(0)
    model = Transformer(tiny_config(positional=positional)).eval()
    pe = positional_matrix(model, "tgt", 7)
    assert pe.shape == (7, 32)
    x = torch.zeros(1, 7, 32)
    assert torch.equal(model.tgt_pos(x)[0], pe)
    if positional == "sinusoidal":
        p, i = np.arange(7)[:, None], np.arange(16)[None, :]
        ref = np.zeros((7, 32))
        ref[:, 0::2] = np.sin(p / 10000 ** (2 * i / 32))
        ref[:, 1::2] = np.cos(p / 10000 ** (2 * i / 32))
        assert np.allclose(pe.numpy(), ref, atol=1e-5)
        assert torch.equal(pe, sinusoid_table(64, 32, "interleaved")[:7].float())
    with pytest.raises(ValueError, match="outside 1..64"):
        positional_matrix(model, "src", 65)
