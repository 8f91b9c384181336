"""``python -m core import-marian``: bad sources fail with one ``error:`` line, exit 2 and no
output folder (not even a partial one); a pickle never runs code; a plain-tensor .bin imports."""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import sys

import pytest
import torch

from core.__main__ import main
from core.checkpoints.checkpoint import load_checkpoint
from tests.support import ROOT
from tests.support.marian import build_marian, require_import_extra


@pytest.fixture(scope="module")
def marian_dir(tmp_path_factory):
    require_import_extra()
    folder = tmp_path_factory.mktemp("marian-src") / "hf"
    hf, tok = build_marian(folder, "swish")
    return folder, hf, tok


def _run(capsys, source, out) -> tuple[int, str]:
    code = main(["import-marian", str(source), "--out", str(out)])
    err = capsys.readouterr().err.strip()
    return code, err


def _broken_copy(marian_dir, tmp_path):
    src = tmp_path / "src"
    shutil.copytree(marian_dir[0], src)
    return src


def _assert_failed(code, err, out, *words):
    assert code == 2
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
    for w in words:
        assert w in err
    assert not out.exists()
    assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]  # no temporary leftovers


def test_not_a_marian_folder(marian_dir, tmp_path, capsys):
    src = _broken_copy(marian_dir, tmp_path)
    cfg = json.loads((src / "config.json").read_text())
    (src / "config.json").write_text(json.dumps(cfg | {"model_type": "bert"}))
    out = tmp_path / "out"
    _assert_failed(*_run(capsys, src, out), out, "not 'marian'")
    empty = tmp_path / "empty"
    empty.mkdir()
    _assert_failed(*_run(capsys, empty, out), out, "config.json", "missing")


def test_missing_spm_file(marian_dir, tmp_path, capsys):
    src = _broken_copy(marian_dir, tmp_path)
    (src / "target.spm").unlink()
    out = tmp_path / "out"
    _assert_failed(*_run(capsys, src, out), out, "target.spm", "missing")


def test_vocabulary_that_does_not_match_the_embedding(marian_dir, tmp_path, capsys):
    src = _broken_copy(marian_dir, tmp_path)
    vocab = json.loads((src / "vocab.json").read_text(encoding="utf-8"))
    vocab["▁extra"] = len(vocab)
    (src / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    out = tmp_path / "out"
    _assert_failed(*_run(capsys, src, out), out, "vocab.json", "rows")


class _Evil:
    def __reduce__(self):
        return (exec, ("open(__import__('os').environ['EVIL_MARKER'], 'w').write('ran')",))


def test_pickle_with_code_is_refused_and_never_runs(marian_dir, tmp_path, capsys, monkeypatch):
    src = _broken_copy(marian_dir, tmp_path)
    (src / "model.safetensors").unlink()
    marker = tmp_path / "marker"
    monkeypatch.setenv("EVIL_MARKER", str(marker))
    with open(src / "pytorch_model.bin", "wb") as f:
        pickle.dump({"model.shared.weight": _Evil()}, f)
    out = tmp_path / "out"
    _assert_failed(*_run(capsys, src, out), out, "pytorch_model.bin", "weights_only")
    assert not marker.exists()


def test_plain_tensor_pytorch_model_bin_imports(marian_dir, tmp_path, capsys):
    src = _broken_copy(marian_dir, tmp_path)
    (src / "model.safetensors").unlink()
    hf = marian_dir[1]
    torch.save({k: v.clone() for k, v in hf.state_dict().items()}, src / "pytorch_model.bin")
    out = tmp_path / "out"
    code, err = _run(capsys, src, out)
    assert code == 0, err
    ck = load_checkpoint(out, device="cpu")
    src_ids = torch.tensor([marian_dir[2]("나는 학생입니다.").input_ids])
    dec = torch.tensor([[ck.config.start_id, 5, 9, 3]])
    with torch.no_grad():
        theirs = hf(input_ids=src_ids, decoder_input_ids=dec).logits
        ours = ck.model(src_ids, dec)
    assert float((ours - theirs).abs().max()) < 1e-4
    assert {p.name for p in out.iterdir()} >= {
        "config.json",
        "model.safetensors",
        "tokenizer_src.json",
        "tokenizer_tgt.json",
        "README.md",
        "source.spm",
        "target.spm",
        "vocab.json",
    }
    assert "CC-BY 4.0" in (out / "README.md").read_text(encoding="utf-8")


def test_existing_output_folder_is_left_alone(marian_dir, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    code, err = _run(capsys, marian_dir[0], out)
    assert code == 2 and err.startswith("error: ") and "already exists" in err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_cli_process_exit_status(tmp_path):
    out = tmp_path / "out"
    r = subprocess.run(
        [sys.executable, "-m", "core", "import-marian", str(tmp_path / "nope"), "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and r.stderr.strip().startswith("error: ") and len(r.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_ci_installs_the_import_extra_and_refuses_to_skip():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert '".[test,import]"' in ci and "export REQUIRE_IMPORT_EXTRA=1" in ci


def test_hub_id_offline_is_one_error_line(tmp_path):
    pytest.importorskip("huggingface_hub")
    out = tmp_path / "out"
    env = {**__import__("os").environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf-home")}
    r = subprocess.run(
        [sys.executable, "-m", "core", "import-marian", "Helsinki-NLP/opus-mt-ko-en", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert r.returncode == 2
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "download failed" in errors[0] and "Traceback" not in r.stderr
    assert not out.exists()


def test_a_killed_import_leaves_nothing_once_the_next_import_runs(marian_dir, tmp_path, capsys):
    """An import killed mid-write (SIGKILL: no cleanup) leaves a hidden ``.NAME.partial-PID``
    folder; the next import into that folder removes it (its process is gone), whatever its name."""
    from core.checkpoints.atomic_io import PARTIAL

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".other{PARTIAL}{int(dead.stdout)}"  # a finished process's pid: certainly gone
    stale.mkdir()
    (stale / "model.safetensors").write_bytes(b"half")
    code, err = _run(capsys, marian_dir[0], tmp_path / "ours")
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ours"]
    load_checkpoint(tmp_path / "ours", device="cpu")
