"""``main.py --panel ablate|compare|inside|positional --screenshot`` (slides): each run
fills its tab through the app's own worker, prints one line saying what the tab shows (checked
against core's own functions here) and writes the PNG; bad options give one ``error:`` line, exit 2."""

from __future__ import annotations

import subprocess
import sys

import pytest
from PySide6 import QtGui

from core.analysis.ablation import translate_ablated
from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.translate import translate
from tests.support import ROOT
from tests.support.gui import TEXT

OTHER = "제발 앉아."


def _run(*args):
    import os

    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, "main.py", *args], cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)


def _shot(ckpt, tmp_path, *args):
    png = tmp_path / "shot.png"
    r = _run("--checkpoint", str(ckpt), "--text", TEXT, "--size", "1400x900", *args, "--screenshot", str(png))
    assert r.returncode == 0, r.stderr
    img = QtGui.QImage(str(png))
    assert (img.width(), img.height()) == (1400, 900)
    return r.stdout.splitlines()[0]


def test_ablate_panel(tiny_checkpoint, tmp_path):
    line = _shot(tiny_checkpoint, tmp_path, "--panel", "ablate", "--ablate", "1:2,2:1", "--ablate-kind", "dec")
    ref = translate_ablated(load_checkpoint(tiny_checkpoint, device="cpu"), TEXT, [(1, 2), (2, 1)], "dec")
    assert line == f"ablate dec 1:2,2:1: {ref.ablated.translation} (unablated: {ref.original.translation})"


def test_compare_panel(tiny_checkpoint, tmp_path):
    line = _shot(tiny_checkpoint, tmp_path, "--panel", "compare", "--compare-text", OTHER)
    ck = load_checkpoint(tiny_checkpoint, device="cpu")
    assert line == f"compare: A {translate(ck, TEXT).translation} | B {translate(ck, OTHER).translation}"


def test_inside_panel_query_and_head(tiny_checkpoint, tmp_path):
    line = _shot(
        tiny_checkpoint, tmp_path, "--panel", "inside", "--view", "encoder", "--layer", "2", "--head", "3", "--query", "2"
    )
    tok = translate(load_checkpoint(tiny_checkpoint, device="cpu"), TEXT).maps.src_tokens[1]
    assert line == f"inside enc layer 2 head 3 query 2 {tok!r}"


def test_positional_panel(tiny_checkpoint, tmp_path):
    line = _shot(tiny_checkpoint, tmp_path, "--panel", "positional")
    ck = load_checkpoint(tiny_checkpoint, device="cpu")
    assert line.startswith("positional ") and line.endswith(f"positions × {ck.config.d_model}")


@pytest.mark.parametrize(
    "args,msg",
    [
        (["--panel", "ablate", "--ablate", "3:1"], "error: --ablate 3:1: layer 3 out of range 1..2 (enc)"),
        (["--ablate", "1:1"], "error: --ablate needs --panel ablate"),
        (["--panel", "ablate", "--ablate", "1:x"], "error: --ablate item '1:x' is not layer:head"),
        (["--panel", "inside", "--view", "encoder", "--query", "99"], "error: --query must be 1.."),
        (["--panel", "compare"], "error: --panel compare with --screenshot needs --compare-text"),
    ],
)
def test_bad_panel_options(tiny_checkpoint, tmp_path, args, msg):
    r = _run("--checkpoint", str(tiny_checkpoint), "--text", TEXT, *args, "--screenshot", str(tmp_path / "x.png"))
    err = [x for x in r.stderr.splitlines() if x.startswith("error:")]
    assert r.returncode == 2 and len(err) == 1 and err[0].startswith(msg), r.stderr
    assert not (tmp_path / "x.png").exists()
