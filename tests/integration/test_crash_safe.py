"""Fault injection on training runs (tiny model, seconds each): a process killed at random times
or inside a save, a full disk, two runs on one folder, re-running the original command. After each
fault the run resumes from its newest complete save and ends with the same weights as a run that
was never interrupted; nothing half-written is ever loaded."""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest
import torch
from safetensors.torch import load_file

from core.checkpoints.atomic_io import verify_manifest
from core.training.run_folder import RunLock, RunLockedError, newest_complete_save, step_dirs
from core.training.train import TrainOptions, resume_options, train
from tests.support import ROOT
from tests.support.crash_driver import POINTS, options

STEPS = 8


def drive(out, steps=STEPS, *extra: str, timeout: int = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "tests.support.crash_driver", str(out), str(steps), *extra],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def weights(run) -> dict[str, torch.Tensor]:
    save = newest_complete_save(run)
    assert save is not None
    return load_file(str(save[0] / "model.safetensors"))


def assert_same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k


def log_steps(run) -> list[int]:
    return [json.loads(x)["step"] for x in (run / "log.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted run of STEPS steps."""
    out = tmp_path_factory.mktemp("ref") / "run"
    train(options(str(out), STEPS))
    return out


def finish(out) -> subprocess.CompletedProcess:
    """Resume until the run is done (a resume that itself finds nothing to resume starts over)."""
    res = drive(out, STEPS, "--resume")
    assert res.returncode == 0, res.stderr[-1500:]
    return res


@pytest.mark.parametrize("point", list(POINTS))
def test_killed_inside_a_save_resumes_to_the_uninterrupted_weights(reference, tmp_path, point):
    out = tmp_path / "run"
    died = drive(out, STEPS, "--die", f"{point}:2")
    assert died.returncode == 137, died.stderr[-1500:]
    for d in step_dirs(out):  # whatever is visible under a step_N name is complete
        assert verify_manifest(d) is None
    finish(out)
    assert_same(weights(out), weights(reference))
    assert log_steps(out) == log_steps(reference)  # no duplicated or missing validation line
    assert not [p.name for p in out.iterdir() if ".partial-" in p.name or ".old-" in p.name]


def test_killed_at_random_times_resumes_to_the_uninterrupted_weights(reference, tmp_path):
    rng = random.Random(12345)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    for trial in range(3):
        out = tmp_path / f"run{trial}"
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.crash_driver", str(out), str(STEPS)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.time() + 60
        while not (out / "options.json").exists() and time.time() < deadline:  # training has started
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, 1.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        finish(out)
        assert_same(weights(out), weights(reference))
        assert log_steps(out) == log_steps(reference)


def test_a_damaged_newest_save_is_skipped_not_loaded(reference, tmp_path, caplog):
    out = tmp_path / "run"
    train(options(str(out), 6))
    newest = step_dirs(out)[-1]
    with open(newest / "model.safetensors", "r+b") as f:  # a bad disk: same size, different bytes
        f.seek(200)
        f.write(b"\0" * 64)
    assert "SHA-256" in verify_manifest(newest)
    with caplog.at_level("WARNING"):
        train(TrainOptions(train=[], valid=[], out=str(out)), resume=True, overrides={"max_steps": STEPS})
    assert any("skipping a damaged save" in r.getMessage() and "step_6" in r.getMessage() for r in caplog.records)
    assert_same(weights(out), weights(reference))  # resumed from step_4 and redid 5..8


def test_a_full_disk_during_a_save_is_one_error_and_earlier_saves_survive(reference, tmp_path, monkeypatch):
    from core.training import train as train_mod

    out = tmp_path / "run"
    calls = {"n": 0}
    real = train_mod.save_train_state

    def full(*a, **k):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*a, **k)

    monkeypatch.setattr(train_mod, "save_train_state", full)
    with pytest.raises(OSError, match="No space left"):
        train(options(str(out), STEPS))
    assert [d.name for d in step_dirs(out)] == ["step_2"]  # the failed step_4 left nothing behind
    assert verify_manifest(out / "step_2") is None
    assert not [p.name for p in out.iterdir() if ".partial-" in p.name]
    monkeypatch.setattr(train_mod, "save_train_state", real)
    train(TrainOptions(train=[], valid=[], out=str(out)), resume=True, overrides={"max_steps": STEPS})
    assert_same(weights(out), weights(reference))


def test_full_disk_on_the_command_line_is_one_error_line(tmp_path):
    out = tmp_path / "run"
    res = drive(out, STEPS, "--die", "save_file:1")  # sanity: the driver's hook works from the CLI too
    assert res.returncode == 137
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cli = subprocess.run(
        [
            sys.executable,
            "-c",
            (
                "import errno, sys\n"
                "import core.training.train as t\n"
                "def full(*a, **k): raise OSError(errno.ENOSPC, 'No space left on device')\n"
                "t.save_train_state = full\n"
                "from core.__main__ import main\n"
                f"sys.exit(main(['train', '--train', r'{ROOT / 'tests/fixtures/tiny'}',"
                f" '--valid', r'{ROOT / 'tests/fixtures/tiny'}',"
                f" '--out', r'{tmp_path / 'cli'}', '--src-vocab', '120', '--tgt-vocab', '100', '--d-model', '32',"
                " '--n-heads', '4', '--layers', '1', '--d-ff', '32', '--max-steps', '3', '--save-every', '2', '--threads', '1']))"
            ),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cli.returncode == 2, cli.stderr[-1500:]
    errors = [x for x in cli.stderr.splitlines() if x.startswith("error:")]
    assert len(errors) == 1 and "No space left on device" in errors[0]
    assert "Traceback" not in cli.stderr


def test_a_second_run_on_the_same_folder_is_refused(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    lock = RunLock(out).acquire()
    try:
        with pytest.raises(RunLockedError, match=f"pid {os.getpid()}"):
            train(options(str(out), 2))
        res = drive(out, 2)  # another process: refused too
        assert res.returncode != 0 and "another training run" in res.stderr
    finally:
        lock.release()
    train(options(str(out), 2))  # once the first one is gone the folder is free again
    assert [d.name for d in step_dirs(out)] == ["step_2"]


def test_a_new_run_into_a_folder_with_saves_is_refused(tmp_path):
    out = tmp_path / "run"
    train(options(str(out), 2))
    with pytest.raises(ValueError, match="already holds a run's saves"):
        train(options(str(out), 4))


def test_rerunning_the_original_command_with_resume_continues(reference, tmp_path):
    import dataclasses

    out = tmp_path / "run"
    train(options(str(out), 4))
    given = {k: v for k, v in dataclasses.asdict(options(str(out), STEPS)).items() if k != "extra"}
    train(TrainOptions(train=[], valid=[], out=str(out)), resume=True, overrides=given)
    assert_same(weights(out), weights(reference))
    with pytest.raises(ValueError, match=r"d_model \(saved 32, given 64\)"):
        train(TrainOptions(train=[], valid=[], out=str(out)), resume=True, overrides={**given, "d_model": 64})


def test_resume_on_a_finished_run_trains_nothing(tmp_path):
    out = tmp_path / "run"
    train(options(str(out), 4))
    before = sorted(p.name for p in out.iterdir())
    train(TrainOptions(train=[], valid=[], out=str(out)), resume=True, overrides={})
    assert sorted(p.name for p in out.iterdir()) == before
    assert [d.name for d in step_dirs(out)] == ["step_2", "step_4"]


def test_resume_options_names_saved_and_given_values():
    saved = {"d_model": 256, "layers": 4, "max_steps": 10}
    assert resume_options(saved, {"d_model": 256, "max_steps": 20})["max_steps"] == 20
    with pytest.raises(ValueError, match=r"layers \(saved 4, given 6\)"):
        resume_options(saved, {"layers": 6})


def test_a_run_saved_in_the_earlier_layout_still_resumes(reference, tmp_path):
    """Runs started before step folders held the resume state (OUT/last/ + OUT/train_state.*)
    continue with --resume."""
    import shutil

    out = tmp_path / "run"
    train(options(str(out), 4))
    newest = step_dirs(out)[-1]
    (out / "last").mkdir()
    for f in newest.iterdir():
        if f.name.startswith("train_state."):
            shutil.move(str(f), out / f.name)
        elif f.name != "manifest.json":
            shutil.move(str(f), out / "last" / f.name)
    for d in step_dirs(out):
        shutil.rmtree(d)
    assert newest_complete_save(out) == (out / "last", out)
    train(TrainOptions(train=[], valid=[], out=str(out)), resume=True, overrides={"max_steps": STEPS})
    assert_same(weights(out), weights(reference))
