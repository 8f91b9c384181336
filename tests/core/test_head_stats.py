"""Head summaries against independent numpy computations: hand-built one-hot heads
whose pattern is known, and a tiny model's real maps."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core.analysis.head_stats import (
    format_table,
    head_entropy,
    head_table,
    mean_over_heads,
    rollout,
    sort_column,
    sort_heads,
)
from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.translate import translate
from core.transformer.maps import AttentionMaps
from core.transformer.masks import causal_mask

TEXT = "집에 누군가 있어?"


def np_rollout(enc: np.ndarray) -> np.ndarray:
    """Abnar & Zuidema: per layer 0.5·A + 0.5·I (A = head mean, rows sum to 1), multiplied up."""
    s = enc.shape[-1]
    out = np.eye(s)
    for layer in enc.astype(np.float64):
        a = layer.mean(0)
        a = a + np.eye(s)
        a = a / a.sum(-1, keepdims=True)
        out = a @ out
    return out


def np_entropy(w: np.ndarray, visible: np.ndarray, valid: np.ndarray) -> np.ndarray:
    rows = valid & visible.any(-1)
    out = np.zeros(w.shape[:2])
    for li in range(w.shape[0]):
        for hi in range(w.shape[1]):
            es = []
            for i in np.nonzero(rows)[0]:
                p = w[li, hi, i][visible[i]].astype(np.float64)
                p = p[p > 0]
                es.append(float(-(p * np.log(p)).sum()))
            out[li, hi] = np.mean(es)
    return out


def one_hot_heads(s: int) -> torch.Tensor:
    """[1, 4, S, S]: head 1 previous token (row 0 on itself), head 2 same, head 3 next (last row on
    itself), head 4 everything on the last key."""
    w = torch.zeros(1, 4, s, s)
    for i in range(s):
        w[0, 0, i, max(i - 1, 0)] = 1
        w[0, 1, i, i] = 1
        w[0, 2, i, min(i + 1, s - 1)] = 1
        w[0, 3, i, s - 1] = 1
    return w


def hand_maps(enc: torch.Tensor, dec: torch.Tensor, cross: torch.Tensor, src_pad=None) -> AttentionMaps:
    s, t = enc.shape[-1], dec.shape[-1]
    skpm = torch.zeros(s, dtype=torch.bool) if src_pad is None else src_pad
    return AttentionMaps(
        enc,
        dec,
        cross,
        skpm,
        torch.zeros(t, dtype=torch.bool),
        causal_mask(t),
        ["▁a", "▁b", "▁c", "▁d", "[EOS]"][:s],
        ["[BOS]", "▁x", "▁y", "▁z", "▁w", "▁v"][:t],
    )


def test_one_hot_heads_get_their_known_labels_and_masses():
    enc = one_hot_heads(5)
    t = 6  # with 4 rows the uniform head's mean on its own position would be 0.52 ("same")
    dec = torch.zeros(1, 2, t, t)
    for i in range(t):
        dec[0, 0, i, max(i - 1, 0)] = 1  # previous token (BOS on itself)
        dec[0, 1, i, : i + 1] = 1 / (i + 1)  # uniform over the visible prefix
    cross = torch.zeros(1, 2, t, 5)
    for i in range(t):
        cross[0, 0, i, min(i, 3)] = 1  # diagonal, then stays on the last word
        cross[0, 1, i, 4] = 1  # [EOS] sink
    maps = hand_maps(enc, dec, cross)
    rows = head_table(maps, "enc")
    assert [r.label for r in rows] == ["previous", "same", "next", "sink"]
    assert [r.prev for r in rows] == pytest.approx([4 / 5, 0, 0, 0])  # row 0 has no previous key
    assert [r.same for r in rows] == pytest.approx([1 / 5, 1, 1 / 5, 1 / 5])
    assert [r.next for r in rows] == pytest.approx([0, 0, 4 / 5, 1 / 5])
    assert [r.sink for r in rows] == pytest.approx([0, 1 / 5, 2 / 5, 1])  # key 5 is [EOS]
    assert all(r.entropy == 0 for r in rows)
    assert [(r.layer, r.head) for r in rows] == [(1, 1), (1, 2), (1, 3), (1, 4)]
    d = head_table(maps, "dec")
    assert [r.label for r in d] == ["previous", "broad"]
    assert all(r.next == 0 and not r.next_possible and "causal mask" in r.note for r in d)
    ref = np_entropy(dec.numpy(), ~causal_mask(t).numpy(), np.ones(t, bool))
    assert [r.entropy for r in d] == pytest.approx(ref[0].tolist(), abs=1e-6)
    assert d[1].entropy == pytest.approx(np.mean([np.log(n) for n in range(1, t + 1)]))
    c = head_table(maps, "cross")
    assert [r.label for r in c] == ["monotone", "sink"]
    assert c[0].prev is None and c[0].monotone == 1 and c[1].sink == 1


def test_padding_rows_left_out_and_pad_columns_zero_in_rollout():
    s = 5
    pad = torch.tensor([False, False, False, True, True])
    torch.manual_seed(0)
    enc = torch.rand(3, 2, s, s).masked_fill(pad, 0.0)
    enc = enc / enc.sum(-1, keepdim=True)
    r = rollout(enc)
    assert np.allclose(r.numpy(), np_rollout(enc.numpy()), atol=1e-6)
    assert torch.allclose(r.sum(-1), torch.ones(s))
    assert (r[:3, 3:] == 0).all()  # real queries never reach a pad
    mean = mean_over_heads(enc)
    assert mean.dtype == torch.float32 and mean.shape == (3, s, s)
    assert torch.allclose(mean, enc.mean(1), rtol=0, atol=1e-7)
    assert np.array_equal(mean.numpy(), (enc.numpy().sum(1, dtype=np.float64) / 2).astype(np.float32))
    assert (mean[:, :, 3:] == 0).all()  # masked (pad) key columns stay exactly 0
    ent = head_entropy(enc, ~pad[None, :].expand(s, s), ~pad)
    ref = np_entropy(enc.numpy(), ~pad[None, :].expand(s, s).numpy(), ~pad.numpy())
    assert np.allclose(ent.numpy(), ref, atol=1e-6)
    # a garbage pad-query row does not change anything
    enc2 = enc.clone()
    enc2[:, :, 3:] = torch.tensor([1.0, 0, 0, 0, 0])
    assert torch.equal(head_entropy(enc2, ~pad[None, :].expand(s, s), ~pad), ent)


def test_sort_heads_and_errors():
    maps = hand_maps(one_hot_heads(5), torch.eye(3)[None, None], torch.full((1, 1, 3, 5), 0.2))
    rows = head_table(maps, "enc")
    assert [r.head for r in sort_heads(rows, "sink", descending=True)] == [4, 3, 2, 1]
    assert [r.head for r in sort_heads(rows, "prev")] == [2, 3, 4, 1]
    cross = head_table(maps, "cross")
    assert sort_heads(cross, "prev") == cross  # None sorts last, nothing lost
    with pytest.raises(ValueError, match="unknown column"):
        sort_heads(rows, "nope")
    # every header format_table prints is an accepted sort key, naming the same column
    header = format_table(rows).splitlines()[0].split()
    assert [sort_column(h) for h in header] == [
        "kind",
        "layer",
        "head",
        "entropy",
        "max_entropy",
        "prev",
        "same",
        "next",
        "sink",
        "monotone",
        "label",
    ]
    by_mono = [(r.monotone, r.head) for r in sort_heads(rows, "mono", descending=True)]
    assert by_mono == sorted(((r.monotone, r.head) for r in rows), key=lambda x: -x[0])
    assert sort_heads(rows, "mono") == sort_heads(rows, "monotone")
    assert [r.head for r in sort_heads(rows, "H", descending=True)] == [4, 3, 2, 1]
    with pytest.raises(ValueError, match="unknown attention kind"):
        head_table(maps, "encoder")
    with pytest.raises(ValueError, match="rollout"):
        rollout(torch.zeros(2, 2, 3, 4))


def test_real_maps_of_a_tiny_model(tiny_checkpoint):
    ck = load_checkpoint(tiny_checkpoint, device="cpu")
    m = translate(ck, TEXT, pad_to=12).maps
    enc = m.encoder_self.numpy()
    assert np.allclose(rollout(m.encoder_self).numpy(), np_rollout(enc), atol=1e-5)
    spad = m.src_key_padding_mask.numpy()
    assert spad.any()
    for kind, w, vis, valid in (
        ("enc", enc, np.broadcast_to(~spad, enc.shape[-2:]), ~spad),
        (
            "dec",
            m.decoder_self.numpy(),
            np.tril(np.ones(m.decoder_self.shape[-2:], bool)),
            np.ones(m.decoder_self.shape[-2], bool),
        ),
        ("cross", m.cross.numpy(), np.broadcast_to(~spad, m.cross.shape[-2:]), np.ones(m.cross.shape[-2], bool)),
    ):
        rows = head_table(m, kind)
        ent = np_entropy(w, vis, valid)
        assert len(rows) == w.shape[0] * w.shape[1]
        assert [r.entropy for r in rows] == pytest.approx(ent.flatten().tolist(), abs=1e-5)
        q = np.nonzero(valid)[0]
        sink = np.array(
            [t == "[EOS]" or t.lstrip("▁") in {".", "?", "!", ","} for t in (m.src_tokens if kind != "dec" else m.tgt_tokens)]
        )
        ref_sink = (w[:, :, q][..., sink]).sum(-1).mean(-1)
        assert [r.sink for r in rows] == pytest.approx(ref_sink.flatten().tolist(), abs=1e-5)
        if kind != "cross":
            same = np.stack([w[:, :, i, i] for i in q], -1).mean(-1)
            assert [r.same for r in rows] == pytest.approx(same.flatten().tolist(), abs=1e-5)
            prev = np.stack([w[:, :, i, i - 1] if i > 0 else np.zeros(w.shape[:2]) for i in q], -1).mean(-1)
            assert [r.prev for r in rows] == pytest.approx(prev.flatten().tolist(), abs=1e-5)
    assert all(r.next == 0 and not r.next_possible for r in head_table(m, "dec"))
    assert any(r.next > 0 for r in head_table(m, "enc"))


def test_cli_heads_json_text_and_errors(tiny_checkpoint, capsys):
    import json

    from core.__main__ import main as cli

    ck = load_checkpoint(tiny_checkpoint, device="cpu")
    m = translate(ck, TEXT).maps
    base = ["translate", TEXT, "--checkpoint", str(tiny_checkpoint)]
    assert cli(base + ["--heads", "--heads-sort", "sink", "--heads-desc", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["derived"]
    assert np.allclose(d["rollout"], np_rollout(m.encoder_self.numpy()), atol=2e-6)
    assert np.allclose(d["mean_over_heads"]["cross"], m.cross.numpy().mean(1), atol=2e-6)
    for kind in ("enc", "dec", "cross"):
        sinks = [h["sink"] for h in d["heads"][kind]]
        assert sinks == sorted(sinks, reverse=True) and len(sinks) == 8
        want = {(h.layer, h.head): round(h.entropy, 6) for h in head_table(m, kind)}
        assert {(h["layer"], h["head"]): h["entropy"] for h in d["heads"][kind]} == want
    assert cli(base + ["--heads", "--heads-sort", "mono", "--heads-desc", "--heads-kind", "cross"]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    assert lines[0].split()[9] == "mono"
    mono = [float(line.split()[9]) for line in lines[1:]]
    assert len(mono) == 8 and mono == sorted(mono, reverse=True)
    assert cli(base + ["--heads", "--heads-sort", "mono", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["derived"]["sort"] == "monotone"
    assert cli(base + ["--heads", "--heads-kind", "dec"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == translate(ck, TEXT).translation and out[1].startswith("kind") and len(out) == 2 + 8
    assert all(line.startswith("dec") and "causal mask" in line for line in out[2:])
    for args, msg in (
        (["--heads", "--heads-sort", "nope"], "unknown column"),
        (["--heads-desc"], "need --heads"),
        (["--heads", "--ablate", "1:1"], "cannot be combined"),
    ):
        assert cli(base + args) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error:") and msg in err and "\n" not in err, err


def test_head_table_is_empty_before_the_first_decoder_step():
    enc = one_hot_heads(4)
    dec = torch.zeros(1, 4, 0, 0)
    cross = torch.zeros(1, 4, 0, 4)
    maps = AttentionMaps(
        enc,
        dec,
        cross,
        torch.zeros(4, dtype=torch.bool),
        torch.zeros(0, dtype=torch.bool),
        causal_mask(0),
        ["▁a", "▁b", "▁c", "[EOS]"],
        [],
    )
    assert head_table(maps, "dec") == [] and head_table(maps, "cross") == []
    assert len(head_table(maps, "enc")) == 4
