"""Checkpoint averaging: the element-wise mean, written crash-safely, refused for inputs that
cannot be averaged (different tokenizers) and for an --out that is one of the inputs
(tests/integration/test_nothing_lost.py: an --out that holds anything else)."""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from core.__main__ import main as cli_main
from core.checkpoints.atomic_io import verify_manifest
from core.checkpoints.checkpoint import load_checkpoint
from core.errors import CheckpointError
from core.training.average import average_checkpoints
from tests.support import save_tiny


@pytest.fixture
def two(tmp_path, tiny_tokenizers):
    return save_tiny(tmp_path / "a", tiny_tokenizers, seed=1), save_tiny(tmp_path / "b", tiny_tokenizers, seed=2)


def test_average_is_the_elementwise_mean(two, tmp_path):
    a, b = two
    out = average_checkpoints([a, b], tmp_path / "avg")
    assert verify_manifest(out) is None
    wa, wb = (load_checkpoint(p, device="cpu").model.state_dict() for p in (a, b))
    wm = load_checkpoint(out, device="cpu").model.state_dict()
    for k in wm:
        assert torch.allclose(wm[k], (wa[k].double() + wb[k].double()).div(2).float()), k


def test_average_refuses_tokenizers_that_differ(two, tmp_path):
    a, b = two
    c = tmp_path / "c"
    shutil.copytree(b, c)
    spec = json.loads((c / "tokenizer_tgt.json").read_text(encoding="utf-8"))
    vocab = spec["model"]["vocab"]
    x, y = (p for p, i in vocab.items() if i in (10, 11))
    vocab[x], vocab[y] = vocab[y], vocab[x]  # same config, two ids swapped
    (c / "tokenizer_tgt.json").write_text(json.dumps(spec), encoding="utf-8")
    with pytest.raises(CheckpointError, match=r"tgt tokenizer differs .*id 10: "):
        average_checkpoints([a, c], tmp_path / "avg")
    assert not (tmp_path / "avg").exists()


def test_average_refuses_to_overwrite_an_input(two, capsys):
    a, b = two
    before = (a / "model.safetensors").read_bytes()
    code = cli_main(["average", str(a), str(b), "--out", str(a)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and "is one of the input checkpoints" in err
    assert (a / "model.safetensors").read_bytes() == before
