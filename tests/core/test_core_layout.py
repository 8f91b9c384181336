"""``core`` stays GUI-free and reads as the paper: no module under core/ imports Qt or pyqtgraph,
and multi-head attention exposes W^Q, W^K, W^V, W^O as the paper writes them."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import torch

from core.transformer.attention import MultiHeadAttention
from tests.support import ROOT

GUI_MODULES = ("PySide6", "PyQt5", "PyQt6", "shiboken6", "pyqtgraph")

IMPORT_ALL = """
import importlib, json, pkgutil, sys
import core
names = ["core"] + [m.name for m in pkgutil.walk_packages(core.__path__, "core.")]
failed = {}
for name in names:
    try:
        importlib.import_module(name)
    except Exception as exc:  # reported, so a broken module cannot hide a Qt import
        failed[name] = f"{type(exc).__name__}: {exc}"
gui = sorted(m for m in sys.modules if m.split(".")[0] in GUI_MODULES)
print(json.dumps({"names": names, "failed": failed, "gui": gui}))
""".replace("GUI_MODULES", repr(GUI_MODULES))


def test_no_core_module_imports_qt_or_pyqtgraph():
    out = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "", "QT_QPA_PLATFORM": "offscreen"},
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert {"core.transformer.attention", "core.decoding.beam", "core.training.train", "core.__main__"} <= set(report["names"])
    assert report["failed"] == {}
    assert report["gui"] == [], f"core pulled in {report['gui']}"


def test_the_check_sees_a_qt_import():
    probe = IMPORT_ALL.replace("import core\n", "import core\nimport pyqtgraph\n")
    out = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "", "QT_QPA_PLATFORM": "offscreen"},
    )
    assert "pyqtgraph" in json.loads(out.stdout.strip().splitlines()[-1])["gui"]


def paper_multihead(mha: MultiHeadAttention, x, y):
    """Concat(head_1..head_h) W^O with head_i = Attention(x W_i^Q, y W_i^K, y W_i^V), written out
    from the paper with the module's W_Q/W_K/W_V/W_O (and biases)."""
    d = mha.d_head
    heads = []
    for i in range(mha.n_heads):
        cols = slice(i * d, (i + 1) * d)
        q = x @ mha.W_Q[:, cols] + mha.w_q.bias[cols]
        k = y @ mha.W_K[:, cols] + mha.w_k.bias[cols]
        v = y @ mha.W_V[:, cols] + mha.w_v.bias[cols]
        heads.append(torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d), -1) @ v)
    return torch.cat(heads, -1) @ mha.W_O + mha.w_o.bias


def test_heads_are_column_blocks_of_the_papers_matrices():
    torch.manual_seed(0)
    d_model = 16
    mha = MultiHeadAttention(d_model, 4).eval()
    x, y = torch.randn(2, 5, d_model), torch.randn(2, 7, d_model)
    assert mha.W_Q.shape == mha.W_K.shape == mha.W_V.shape == mha.W_O.shape == (d_model, d_model)
    with torch.no_grad():
        cross, _ = mha(x, y)
        fused, _ = mha(x, x)  # self-attention: the one-GEMM path
        assert torch.allclose(cross, paper_multihead(mha, x, y), atol=1e-5)
        assert torch.allclose(fused, paper_multihead(mha, x, x), atol=1e-5)
    assert {"w_q.weight", "w_k.weight", "w_v.weight", "w_o.weight"} <= set(mha.state_dict())  # checkpoints load
