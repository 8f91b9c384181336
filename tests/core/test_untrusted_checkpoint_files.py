"""A checkpoint folder is untrusted input: every file it names is a regular file inside the folder,
of bounded size, read without hanging. An imported SentencePiece descriptor naming a FIFO,
``/dev/zero``, an absolute path, ``..`` or a huge sparse file is refused with one message; the
app's own config reader (``gui/app.py``) uses the same bounded reader as every other path."""

from __future__ import annotations

import json
import os
import shutil
import threading

import pytest

from core.checkpoints.checkpoint import load_checkpoint
from core.errors import CheckpointError
from core.textio import check_regular_file
from tests.support.marian import build_marian, require_import_extra


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """A checkpoint imported from a tiny Marian model: its tokenizers are SentencePiece descriptors."""
    require_import_extra()
    from core.checkpoints.marian import import_marian

    src = tmp_path_factory.mktemp("marian") / "hf"
    build_marian(src, "swish")
    out = tmp_path_factory.mktemp("imported") / "ck"
    import_marian(str(src), out, log=lambda _: None)
    return out


def load_within(path, seconds: float = 20.0):
    """load_checkpoint in a thread; fails the test (instead of hanging it) if it blocks."""
    result: dict = {}

    def run():
        try:
            result["value"] = load_checkpoint(path, device="cpu")
        except BaseException as exc:
            result["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"loading {path} blocked for {seconds} s"
    return result


def descriptor_naming(imported, tmp_path, key: str, value: str):
    ck = tmp_path / "ck"
    shutil.copytree(imported, ck)
    desc = json.loads((ck / "tokenizer_src.json").read_text(encoding="utf-8"))
    desc[key] = value
    (ck / "tokenizer_src.json").write_text(json.dumps(desc), encoding="utf-8")
    return ck


def test_the_imported_checkpoint_itself_loads(imported):
    assert "value" in load_within(imported)


@pytest.mark.parametrize("key", ["model", "vocab"])
@pytest.mark.parametrize(
    "value, words",
    [
        ("/etc/passwd", "must be a file name inside the checkpoint folder"),
        ("../hf/source.spm", "must be a file name inside the checkpoint folder"),
        ("/dev/zero", "must be a file name inside the checkpoint folder"),
    ],
)
def test_a_descriptor_may_not_name_a_path_outside_its_folder(imported, tmp_path, key, value, words):
    result = load_within(descriptor_naming(imported, tmp_path, key, value))
    assert isinstance(result.get("error"), CheckpointError) and words in str(result["error"])


@pytest.mark.parametrize("key", ["model", "vocab"])
def test_a_descriptor_naming_a_fifo_is_refused_not_read(imported, tmp_path, key):
    ck = descriptor_naming(imported, tmp_path, key, "pipe")
    os.mkfifo(ck / "pipe")
    result = load_within(ck)
    assert isinstance(result.get("error"), CheckpointError) and "not a regular file" in str(result["error"])


def test_a_symlink_to_a_device_or_out_of_the_folder_is_refused(imported, tmp_path):
    ck = descriptor_naming(imported, tmp_path, "model", "zero.spm")
    os.symlink("/dev/zero", ck / "zero.spm")
    result = load_within(ck)
    assert isinstance(result.get("error"), CheckpointError) and "outside the checkpoint folder" in str(result["error"])


def test_a_huge_sparse_vocabulary_is_refused_before_it_is_read(imported, tmp_path):
    ck = descriptor_naming(imported, tmp_path, "vocab", "big.json")
    with open(ck / "big.json", "wb") as f:
        f.truncate(2 << 30)  # 2 GiB, sparse: costs no disk, would cost memory if read
    result = load_within(ck)
    assert isinstance(result.get("error"), CheckpointError) and "more than such a file can be" in str(result["error"])


def test_a_tokenizer_file_that_is_a_fifo_is_refused(tiny_checkpoint, tmp_path):
    ck = tmp_path / "ck"
    shutil.copytree(tiny_checkpoint, ck)
    (ck / "tokenizer_tgt.json").unlink()
    os.mkfifo(ck / "tokenizer_tgt.json")
    result = load_within(ck)
    assert isinstance(result.get("error"), CheckpointError) and "not a regular file" in str(result["error"])


def test_check_regular_file_returns_the_size_and_refuses_devices(tmp_path):
    f = tmp_path / "a.json"
    f.write_text("{}")
    assert check_regular_file(f, 10, inside=tmp_path) == 2
    with pytest.raises(ValueError, match="not a regular file"):
        check_regular_file("/dev/zero", 10)
    with pytest.raises(ValueError, match="outside the checkpoint folder"):
        check_regular_file("/etc/hostname", 1 << 20, inside=tmp_path)
    with pytest.raises(ValueError, match="more than such a file can be"):
        check_regular_file(f, 1)


@pytest.mark.parametrize("make", ["deep", "fifo", "sparse"])
def test_the_apps_start_reads_config_json_through_the_bounded_reader(tiny_checkpoint, tmp_path, make):
    from gui.app import _config_of

    ck = tmp_path / "ck"
    shutil.copytree(tiny_checkpoint, ck)
    cfg = ck / "config.json"
    cfg.unlink()
    if make == "deep":
        cfg.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    elif make == "fifo":
        os.mkfifo(cfg)
    else:
        with open(cfg, "wb") as f:
            f.truncate(2 << 30)
    box: dict = {}
    t = threading.Thread(target=lambda: box.setdefault("config", _config_of(str(ck))), daemon=True)
    t.start()
    t.join(20)
    assert not t.is_alive(), "reading the config blocked"
    assert box["config"] is None  # refused; the load that follows reports why, in one line
    with pytest.raises(CheckpointError):
        load_checkpoint(ck, device="cpu")
    assert _config_of(str(tiny_checkpoint)) is not None
