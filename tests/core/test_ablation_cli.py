"""``python -m core translate --ablate``: the ablated run equals a checkpoint whose W^O
head blocks are zeroed, the unablated run is reported beside it, and bad heads exit 2."""

from __future__ import annotations

import copy
import json

import pytest
import torch

from core.__main__ import main as cli
from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.translate import translate
from tests.core.test_ablation import zeroed_copy

TEXT = "집에 누군가 있어?"


@pytest.fixture(scope="module")
def ck(tiny_checkpoint):
    return load_checkpoint(tiny_checkpoint, device="cpu")


@torch.no_grad()
def sequence_logprob(model, src_ids, out_ids, start_id):
    """log P(out_ids | src) in one teacher-forced parallel pass (independent of the KV-cache path)."""
    src = torch.tensor([src_ids])
    enc = model.encode(src)
    tgt = torch.tensor([[start_id] + out_ids[:-1]])
    logp = model.decode(tgt, enc.memory, enc.src_key_padding_mask).logits[0].log_softmax(-1)
    return float(logp[torch.arange(len(out_ids)), torch.tensor(out_ids)].sum())


@pytest.mark.parametrize("kind, heads", [("cross", [(1, 1), (2, 3)]), ("enc", [(2, 4)]), ("dec", [(1, 2), (2, 2)])])
def test_cli_ablate_json_equals_zeroed_checkpoint(ck, tiny_checkpoint, capsys, kind, heads):
    spec = ",".join(f"{la}:{h}" for la, h in heads)
    assert cli(["translate", TEXT, "--checkpoint", str(tiny_checkpoint), "--ablate", spec, "--ablate-kind", kind, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["ablation"] == {"kind": kind, "heads": [list(p) for p in heads], "spec": spec}
    zck = copy.copy(ck)
    zck.model = zeroed_copy(ck.model, [(kind, la - 1, h - 1) for la, h in heads])
    ref = translate(zck, TEXT)
    orig = translate(ck, TEXT)
    assert d["translation"] == ref.translation
    assert [s["token"] for s in d["steps"]] == [s.token for s in ref.steps]
    assert d["logprob"] == pytest.approx(ref.logprob, abs=1e-4)
    assert d["unablated"]["translation"] == orig.translation
    assert d["unablated"]["logprob"] == pytest.approx(orig.logprob, abs=1e-4)
    assert d["logprob_change"] == pytest.approx(ref.logprob - orig.logprob, abs=1e-4)
    ids = [s.token_id for s in orig.steps]
    src_ids = orig.source.ids
    c = ck.model.config
    under = sequence_logprob(zck.model, src_ids, ids, c.start_id)
    assert d["unablated_output_logprob_ablated"] == pytest.approx(under, abs=1e-4)
    assert d["unablated_output_logprob_change"] == pytest.approx(under - orig.logprob, abs=1e-4)
    assert under != pytest.approx(orig.logprob, abs=1e-4)  # the ablation changed something
    # the maps are the ablated model's own (the ablated heads' weights are still there)
    assert torch.allclose(torch.tensor(d["attention"]["cross"]), ref.maps.cross, atol=1e-5)
    # nothing left behind: a plain run afterwards is the unablated one
    assert translate(ck, TEXT).logprob == orig.logprob


def test_cli_ablate_text_output_and_errors(tiny_checkpoint, capsys, ck):
    base = ["translate", TEXT, "--checkpoint", str(tiny_checkpoint)]
    assert cli(base + ["--ablate", "1:1", "--ablate-kind", "cross"]) == 0
    out = capsys.readouterr()
    assert out.err.count("unablated:") == 1 and "ablated cross 1:1:" in out.err
    assert out.out.strip() == out.err.split("ablated cross 1:1: ")[1].split("  (log P")[0]
    for args, msg in (
        (["--ablate", "3:1"], "layer 3 out of range 1..2"),
        (["--ablate", "1:5", "--ablate-kind", "dec"], "head 5 out of range 1..4"),
        (["--ablate", "0:1"], "1-based"),
        (["--ablate", "2-3"], "not layer:head"),
        (["--ablate-kind", "dec"], "--ablate-kind needs --ablate"),
        (["--ablate", "1:1", "--batch-with", "외로워."], "not with --batch-with"),
    ):
        assert cli(base + args) == 2, args
        err = capsys.readouterr().err.strip()
        assert err.startswith("error:") and msg in err and "\n" not in err, err
