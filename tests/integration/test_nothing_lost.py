"""Commands that write never destroy what is not theirs, and a real full disk is one error line.

``average --out`` and ``import-marian --out`` refuse an existing non-empty folder without
``--force``, and with it replace only a checkpoint folder (never a run folder or a person's files).
A full disk is a real one where the test may mount a small tmpfs (root on Linux), else the writers
raise each library's own error type (safetensors' ``SafetensorError``, tokenizers' ``Exception``),
never an ``OSError`` that the code already handled. The run folder's lock is an OS lock on the
folder: moving ``.lock`` away does not let a second writer in."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from core.__main__ import main as cli_main
from core.checkpoints.atomic_io import as_os_error, verify_manifest
from core.errors import CheckpointError
from core.training.average import average_checkpoints, first_difference
from core.training.run_folder import RunLock, RunLockedError, newest_complete_save, step_dirs
from core.training.train import TrainOptions, train
from tests.support import ROOT, save_tiny
from tests.support.crash_driver import options


@pytest.fixture
def two(tmp_path, tiny_tokenizers):
    return save_tiny(tmp_path / "a", tiny_tokenizers, seed=1), save_tiny(tmp_path / "b", tiny_tokenizers, seed=2)


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# --- average / import-marian never delete what is not their own output ---------------------------


def test_average_into_the_run_folder_is_refused_and_deletes_nothing(tmp_path, capsys):
    run = tmp_path / "run"
    train(options(str(run), 4))
    capsys.readouterr()
    before = tree(run)
    code = cli_main(["average", str(run / "step_2"), str(run / "step_4"), "--out", str(run)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and "contains the input checkpoint" in err
    assert tree(run) == before
    code = cli_main(["average", str(run / "step_2"), str(run / "step_4"), "--out", str(run), "--force"])
    assert code == 2 and "contains the input checkpoint" in capsys.readouterr().err and tree(run) == before
    other = tmp_path / "other-run"
    shutil.copytree(run, other)  # another run's folder, holding none of the inputs
    code = cli_main(["average", str(run / "step_2"), str(run / "step_4"), "--out", str(other), "--force"])
    assert code == 2 and "is not a checkpoint folder" in capsys.readouterr().err and tree(other) == before


def test_average_into_a_folder_of_documents_is_refused_even_with_force(two, tmp_path, capsys):
    a, b = two
    docs = tmp_path / "mydocs"
    docs.mkdir()
    (docs / "thesis.txt").write_text("four years of work\n", encoding="utf-8")
    for extra in ([], ["--force"]):
        code = cli_main(["average", str(a), str(b), "--out", str(docs), *extra])
        err = capsys.readouterr().err
        assert code == 2 and err.startswith("error: "), err
        assert (docs / "thesis.txt").read_text(encoding="utf-8") == "four years of work\n"
        assert sorted(p.name for p in docs.iterdir()) == ["thesis.txt"]
    with pytest.raises(CheckpointError, match="already exists and is not empty"):
        average_checkpoints([a, b], docs)
    with pytest.raises(CheckpointError, match="is not a checkpoint folder .*thesis.txt"):
        average_checkpoints([a, b], docs, force=True)


def test_average_force_replaces_only_an_existing_checkpoint(two, tmp_path):
    a, b = two
    out = average_checkpoints([a, b], tmp_path / "avg")
    first = (out / "model.safetensors").read_bytes()
    with pytest.raises(CheckpointError, match="already exists"):
        average_checkpoints([a, b], out)
    assert (out / "model.safetensors").read_bytes() == first
    average_checkpoints([a, a], out, force=True)  # the mean of a with itself is a
    assert verify_manifest(out) is None
    wa, wo = load_file(str(a / "model.safetensors")), load_file(str(out / "model.safetensors"))
    assert all(torch.equal(wa[k], wo[k]) for k in wa)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert average_checkpoints([a, b], empty) == empty and verify_manifest(empty) is None


def test_import_marian_refuses_a_non_checkpoint_out_even_with_force(tmp_path, capsys):
    docs = tmp_path / "mydocs"
    docs.mkdir()
    (docs / "notes.txt").write_text("keep me\n", encoding="utf-8")
    for extra in ([], ["--force"]):
        code = cli_main(["import-marian", str(tmp_path / "no-such-model"), "--out", str(docs), *extra])
        err = capsys.readouterr().err
        assert code == 2 and ("not empty" in err or "not a checkpoint folder" in err), err
        assert (docs / "notes.txt").read_text(encoding="utf-8") == "keep me\n"


def test_average_compares_whole_tokenizers_not_only_pieces(two, tmp_path, tiny_tokenizers):
    import json

    a, b = two
    c = tmp_path / "c"
    shutil.copytree(b, c)
    spec = json.loads((c / "tokenizer_src.json").read_text(encoding="utf-8"))
    spec["model"]["merges"] = spec["model"]["merges"][:-5]  # same id -> piece map, fewer merges
    (c / "tokenizer_src.json").write_text(json.dumps(spec), encoding="utf-8")
    with pytest.raises(CheckpointError, match=r"src tokenizer differs .*merges differ"):
        average_checkpoints([a, c], tmp_path / "avg")
    spec = json.loads((b / "tokenizer_src.json").read_text(encoding="utf-8"))
    spec["normalizer"]["normalizers"] = spec["normalizer"]["normalizers"][1:]  # no NFC
    (c / "tokenizer_src.json").write_text(json.dumps(spec), encoding="utf-8")
    with pytest.raises(CheckpointError, match="normalizer differs"):
        average_checkpoints([a, c], tmp_path / "avg")
    assert first_difference(*[tiny_tokenizers[0]] * 2) is None


# --- a real full disk ------------------------------------------------------------------------------


@contextlib.contextmanager
def small_disk(tmp_path: Path, kib: int):
    """A tmpfs of ``kib`` KiB mounted at a new folder (root on Linux), or skip."""
    mnt = tmp_path / f"disk-{uuid.uuid4().hex[:6]}"
    mnt.mkdir()
    if sys.platform != "linux" or os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root on Linux")
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", str(mnt)], capture_output=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({res.stderr.decode(errors='replace').strip()[:80]})")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_library_errors_for_a_full_disk_are_read_as_os_errors():
    from safetensors import SafetensorError

    e = as_os_error(SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)"))
    assert isinstance(e, OSError) and e.errno == 28 and "No space left on device" in str(e)
    e = as_os_error(Exception("No space left on device (os error 28)"))  # what tokenizers raises
    assert isinstance(e, OSError) and e.errno == 28
    assert as_os_error(Exception("unrelated")) is None and as_os_error(KeyboardInterrupt()) is None


def test_average_onto_a_real_full_disk_is_one_error_line_and_leaves_nothing(two, tmp_path):
    a, b = two
    with small_disk(tmp_path, 64) as disk:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        res = subprocess.run(
            [sys.executable, "-m", "core", "average", str(a), str(b), "--out", str(disk / "avg")],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert res.returncode == 2, res.stderr[-1500:]
        assert "Traceback" not in res.stderr
        errors = [x for x in res.stderr.splitlines() if x.startswith("error:")]
        assert len(errors) == 1 and "No space left on device" in errors[0], res.stderr[-800:]
        assert sorted(p.name for p in disk.iterdir()) == []  # no partial folder left behind


@pytest.mark.parametrize("kib", [12, 160, 260, 520, 1000])
def test_training_onto_a_real_full_disk_is_one_error_line_and_resumes(tmp_path, kib):
    """The disk fills at a different point for each size (as measured): 12 KiB the run's start
    (options.json, the lock's pid), 160 KiB best/'s weights (SafetensorError), 260 KiB best/'s
    tokenizer (tokenizers' Exception), 520 KiB step_2's tokenizer, 1000 KiB step_4's weights.
    Every case: exit 2, one error line naming a file or save, no traceback, every complete save
    verifies; moved to a disk with room, the run resumes."""
    with small_disk(tmp_path, kib) as disk:
        out = disk / "run"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}

        def command(folder: Path, *extra: str) -> subprocess.CompletedProcess:
            args = [
                "--train",
                f"{ROOT / 'tests/fixtures/tiny'}*2",
                "--valid",
                str(ROOT / "tests/fixtures/tiny"),
                "--out",
                str(folder),
                "--src-vocab",
                "120",
                "--tgt-vocab",
                "100",
                "--d-model",
                "32",
                "--n-heads",
                "4",
                "--layers",
                "2",
                "--d-ff",
                "64",
                "--max-tokens",
                "120",
                "--max-steps",
                "8",
                "--save-every",
                "2",
                "--valid-every",
                "2",
                "--threads",
                "1",
                "--warmup",
                "4",
                "--chrf-lines",
                "4",
                "--keep",
                "2",
                *extra,
            ]
            return subprocess.run(
                [sys.executable, "-m", "core", "train", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
            )

        res = command(out)
        assert res.returncode == 2, (kib, res.returncode, res.stderr[-1500:])
        assert "Traceback" not in res.stderr
        errors = [x for x in res.stderr.splitlines() if x.startswith("error:")]
        assert len(errors) == 1 and "No space left on device" in errors[0], res.stderr[-800:]
        assert f"could not write {out}" in errors[0], errors[0]  # names the file or save
        assert out.is_dir()
        for d in step_dirs(out):
            assert verify_manifest(d) is None, d
        assert not [p.name for p in out.iterdir() if ".partial-" in p.name]
        moved = tmp_path / "room"  # the same run on a disk with room: the original command with --resume
        shutil.copytree(out, moved)
    res = command(moved, "--resume")
    assert res.returncode == 0, res.stderr[-1500:]
    assert newest_complete_save(moved)[0].name == "step_8"


# --- the run folder: an OS lock, resume before options.json, prune ---------------------------------


def test_moving_the_lock_file_away_does_not_let_a_second_writer_in(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    lock = RunLock(out).acquire()
    try:
        os.replace(out / ".lock", tmp_path / "moved.lock")
        with pytest.raises(RunLockedError, match="another training run"):
            train(options(str(out), 2))
        env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
        res = subprocess.run(
            [sys.executable, "-m", "tests.support.crash_driver", str(out), "2"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert res.returncode != 0 and "another training run" in res.stderr
        assert not step_dirs(out)
    finally:
        lock.release()


def test_a_second_run_on_the_command_line_is_one_error_line(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    lock = RunLock(out).acquire()
    try:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
        res = subprocess.run(
            [
                sys.executable,
                "-m",
                "core",
                "train",
                "--train",
                str(ROOT / "tests/fixtures/tiny"),
                "--valid",
                str(ROOT / "tests/fixtures/tiny"),
                "--out",
                str(out),
                "--max-steps",
                "1",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        lock.release()
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert [x for x in res.stderr.splitlines() if x.startswith("error:")] == [
        f"error: {out}: another training run (pid {os.getpid()}) is writing this folder; wait for it or choose another --out"
    ]


def test_a_run_killed_before_options_json_resumes_with_its_original_command(tmp_path):
    import dataclasses

    out = tmp_path / "run"
    out.mkdir()
    (out / ".lock").write_text("12345")  # what a run killed at its very start leaves
    given = {k: v for k, v in dataclasses.asdict(options(str(out), 4)).items() if k != "extra"}
    train(TrainOptions(train=[], valid=[], out=str(out)), resume=True, overrides=given)
    assert [d.name for d in step_dirs(out)] == ["step_2", "step_4"]
    ref = tmp_path / "ref"
    train(options(str(ref), 4))
    wa, wb = (load_file(str(p / "step_4" / "model.safetensors")) for p in (out, ref))
    assert all(torch.equal(wa[k], wb[k]) for k in wa)
    bare = tmp_path / "bare"
    bare.mkdir()
    with pytest.raises(ValueError, match="no options.json, nothing to resume"):
        train(TrainOptions(train=[], valid=[], out=str(bare)), resume=True, overrides={"max_steps": 4})


def test_a_run_killed_during_its_last_prune_keeps_no_extra_save_after_resume(tmp_path):
    out = tmp_path / "run"
    train(options(str(out), 8))  # keep 3: step_4, step_6, step_8
    shutil.copytree(out / "step_4", out / "step_2")  # as if the last prune had been cut before removing it
    train(TrainOptions(train=[], valid=[], out=str(out)), resume=True, overrides={})
    assert [d.name for d in step_dirs(out)] == ["step_4", "step_6", "step_8"]
