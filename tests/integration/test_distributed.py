"""Data-parallel training (torchrun / DistributedDataParallel, gloo on CPU): two processes follow
the same loss curve as one process over the same global batches, the replicas stay
bit-identical after every step, each rank trains on its own shard, resume works on the same
and on a different number of processes, and a killed rank stops the other with an error.

Tolerance: the 2-process run sums the same per-token losses in a different order (per shard,
then all-reduce), so it differs from 1 process by float32 rounding only; train loss and
validation NLL must agree to 1e-4 nats (absolute; measured: under 1e-6) at every one of 6 steps.
The 1-process references run in rank 0's process after the 2-process runs, so both sides use
the same imported code even while the working tree changes under a long test session.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp
from safetensors.torch import load_file

from core.checkpoints.checkpoint import load_checkpoint
from core.tokenizers.bpe import TextTokenizer
from core.training.data import encode_pairs, make_batches, read_parallel
from core.training.run_folder import newest_complete_save
from core.training.summary import training_summary
from core.training.train import TrainOptions, train
from tests.support import FIXTURES, ROOT

TOL = 1e-4
STEPS = 6
# run name -> TrainOptions overrides, all trained by both ranks of one 2-process spawn
RUNS = {
    "ddp": dict(dropout=0.0),  # compared with 1 process
    "ddp_bf16": dict(dropout=0.0, precision="bf16", max_steps=3),
    "ddp_drop": dict(dropout=0.1),  # uninterrupted reference for the resume tests
    "ddp_drop_half": dict(dropout=0.1, max_steps=3),  # resumed on 2 processes by torchrun
    "ddp_half": dict(dropout=0.0, max_steps=3),  # resumed on 1 process
}


def options(out, **kw) -> TrainOptions:
    base = dict(
        train=[f"{FIXTURES / 'tiny'}*2"],
        valid=[str(FIXTURES / "tiny")],
        out=str(out),
        src_vocab=120,
        tgt_vocab=100,
        d_model=32,
        n_heads=4,
        layers=2,
        d_ff=64,
        max_len=48,
        max_tokens=120,
        max_steps=STEPS,
        warmup=4,
        threads=1,
        valid_every=1,
        save_every=3,
        seed=7,
        dist_timeout=300,
    )
    return TrainOptions(**{**base, **kw})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank: int, world: int, ports: list[int], root: str) -> None:
    """One rank, as torchrun would start it (the same environment variables)."""
    os.environ.update(MASTER_ADDR="127.0.0.1", RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank))
    record: dict = {}
    for port, (name, kw) in zip(ports, RUNS.items()):
        os.environ["MASTER_PORT"] = str(port)
        params, rows = record.setdefault(name, ([], []))

        def on_step(step, model, params=params, rows=rows):
            if step == 1:  # from step 2 on, count the sentences this rank's training forward sees
                model.register_forward_pre_hook(lambda m, args: rows.append(args[0].shape[0]) if m.training else None)
            params.append(torch.cat([p.detach().flatten() for p in model.parameters()]).clone())

        train(options(Path(root) / name, **kw), on_step=on_step)
    if rank == 0:  # the 1-process references, with exactly the code the 2-process runs used
        for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
            del os.environ[key]
        train(options(Path(root) / "one", dropout=0.0))
        train(options(Path(root) / "one_bf16", dropout=0.0, precision="bf16", max_steps=3))
        shutil.copytree(Path(root) / "ddp_half", Path(root) / "to_one")  # saved by 2 processes, resumed on 1
        warnings = _Collect()
        logging.getLogger("core").addHandler(warnings)
        train(TrainOptions(train=[], valid=[], out=str(Path(root) / "to_one")), resume=True, overrides={"max_steps": STEPS})
        record["warnings"] = warnings.messages
    torch.save(record, Path(root) / f"rank{rank}.pt")


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


@pytest.fixture(scope="module")
def ddp_runs(tmp_path_factory):
    """All 2-process runs of RUNS, in one spawn (process start-up dominates on a 2-core machine)."""
    root = tmp_path_factory.mktemp("ddp")
    ports = [free_port() for _ in RUNS]
    ctx = mp.start_processes(_worker, args=(2, ports, str(root)), nprocs=2, join=False, start_method="spawn")
    deadline = time.time() + 1200  # generous: a loaded 2-core machine once needed more than 400 s
    while not ctx.join(timeout=5):
        if time.time() > deadline:
            for p in ctx.processes:
                p.kill()
            pytest.fail("2-process training did not finish in 1200 s")
    return root, [torch.load(root / f"rank{r}.pt") for r in range(2)]


def curve(run: Path) -> list[tuple[int, float, float]]:
    return [(e["step"], e["train_loss"], e["valid_nll"]) for e in map(json.loads, (run / "log.jsonl").read_text().splitlines())]


def assert_same_curve(a, b):
    assert [s for s, _, _ in a] == [s for s, _, _ in b]
    for (step, la, va), (_, lb, vb) in zip(a, b):
        assert abs(la - lb) < TOL and abs(va - vb) < TOL, (step, la, lb, va, vb)


def test_two_processes_follow_the_one_process_curve(ddp_runs):
    root, _ = ddp_runs
    one, two = curve(root / "one"), curve(root / "ddp")
    assert len(one) == STEPS
    assert_same_curve(one, two)
    assert one[-1][2] < one[0][2]  # it learns
    single, ddp = training_summary(root / "one"), training_summary(root / "ddp")
    assert (single["world_size"], single["backend"]) == (1, None)
    assert (ddp["world_size"], ddp["backend"]) == (2, "gloo")
    assert ddp["command"].startswith("torchrun --nproc_per_node 2 -m core train")
    assert ddp["target_tokens"] == single["target_tokens"]  # same global batches, counted once


def test_replicas_are_bit_identical_after_every_step(ddp_runs):
    _, (r0, r1) = ddp_runs
    for name in RUNS:
        p0, p1 = r0[name][0], r1[name][0]
        assert len(p0) == len(p1) == RUNS[name].get("max_steps", STEPS)
        for step, (a, b) in enumerate(zip(p0, p1), 1):
            assert torch.equal(a, b), (name, step)
        assert not torch.equal(p0[0], p0[-1])  # and they do change


def test_each_rank_trains_on_its_own_shard_of_the_global_batch(ddp_runs):
    root, (r0, r1) = ddp_runs
    run = root / "ddp"
    src_tok = TextTokenizer.from_file(run / "tokenizer_src.json")
    tgt_tok = TextTokenizer.from_file(run / "tokenizer_tgt.json")
    c = load_checkpoint(newest_complete_save(run)[0], device="cpu").config
    examples = encode_pairs(read_parallel(str(FIXTURES / "tiny")) * 2, src_tok, tgt_tok, c.max_len, c.eos_id, c.bos_id)
    batches = make_batches(examples, 120, seed=7 * 100003)  # epoch 0 holds all 6 steps
    assert len(batches) >= STEPS
    for step in range(2, STEPS + 1):  # rows seen by each rank (recorded from step 2)
        batch = batches[step - 1]
        got = (r0["ddp"][1][step - 2], r1["ddp"][1][step - 2])
        assert got == (max(len(batch[0::2]), 1), max(len(batch[1::2]), 1)), (step, len(batch))


def test_bf16_under_ddp_follows_the_bf16_single_process_curve(ddp_runs):
    root, _ = ddp_runs
    one, two = curve(root / "one_bf16"), curve(root / "ddp_bf16")
    assert len(two) == 3
    for (_, la, va), (_, lb, vb) in zip(one, two):  # bf16 rounds per shard: 1e-2 nats (measured: under 2.5e-3)
        assert abs(la - lb) < 1e-2 and abs(va - vb) < 1e-2


def torchrun(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        "2",
        "--master_addr",
        "127.0.0.1",
        "--master_port",
        str(free_port()),
        "-m",
        "core",
        "train",
        *args,
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def test_resume_on_two_processes_continues_exactly(ddp_runs, tmp_path):
    root, _ = ddp_runs
    run = tmp_path / "split"
    shutil.copytree(root / "ddp_drop_half", run)
    res = torchrun("--resume", "--out", str(run), "--max-steps", str(STEPS))
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.count("checkpoint:") == 1  # rank 0 alone reports
    a = load_file(str(newest_complete_save(root / "ddp_drop")[0] / "model.safetensors"))
    b = load_file(str(newest_complete_save(run)[0] / "model.safetensors"))
    for k in a:  # same weights as the uninterrupted 2-process run, dropout included
        assert torch.equal(a[k], b[k]), k
    assert curve(run) == curve(root / "ddp_drop")
    assert training_summary(run)["world_size"] == 2


def test_resume_on_a_different_number_of_processes_continues_the_curve(ddp_runs):
    root, (r0, _) = ddp_runs
    run = root / "to_one"  # 3 steps on 2 processes, then resumed to 6 on 1 (in the fixture)
    assert any("saved by 2 process(es), resumed on 1" in m for m in r0["warnings"])
    assert_same_curve(curve(run), curve(root / "ddp"))  # same global batches from step 4 on
    assert training_summary(run)["world_size"] == 1


def test_a_killed_rank_stops_the_other_with_an_error(tmp_path):
    out = tmp_path / "killed"
    args = [
        "-m",
        "core",
        "train",
        "--train",
        f"{FIXTURES / 'tiny'}*2",
        "--valid",
        str(FIXTURES / "tiny"),
        "--out",
        str(out),
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
        "--max-len",
        "48",
        "--max-tokens",
        "120",
        "--max-steps",
        "100000",
        "--threads",
        "1",
        "--valid-every",
        "1",
        "--save-every",
        "100000",
        "--dist-timeout",
        "30",
    ]
    base = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()), "WORLD_SIZE": "2"}
    procs = [
        subprocess.Popen(
            [sys.executable, *args],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**base, "RANK": str(r), "LOCAL_RANK": str(r)},
        )
        for r in range(2)
    ]
    try:
        deadline = time.time() + 300  # start-up on a loaded 2-core machine
        while not (out / "log.jsonl").exists() or len((out / "log.jsonl").read_text().splitlines()) < 2:
            assert time.time() < deadline and procs[0].poll() is None, "training did not start"
            time.sleep(0.2)
        procs[1].send_signal(signal.SIGKILL)
        _, err = procs[0].communicate(timeout=60)  # well under --dist-timeout + start-up: no hang
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert procs[0].returncode == 2
    last = [line for line in err.splitlines() if line.startswith("error:")]
    assert last and "rank 0 of 2" in last[-1] and "another process died" in last[-1], err[-2000:]


def test_torchrun_killed_at_random_times_resumes_to_the_uninterrupted_weights(ddp_runs, tmp_path):
    """kill -9 of the whole torchrun group (both ranks and the launcher) at a random moment, then
    the same command with --resume: the weights equal the uninterrupted 2-process run's."""
    import random

    root, _ = ddp_runs
    args = [
        "--train",
        f"{FIXTURES / 'tiny'}*2",
        "--valid",
        str(FIXTURES / "tiny"),
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
        "--max-len",
        "48",
        "--max-tokens",
        "120",
        "--max-steps",
        str(STEPS),
        "--warmup",
        "4",
        "--threads",
        "1",
        "--valid-every",
        "1",
        "--save-every",
        "3",
        "--seed",
        "7",
        "--dist-timeout",
        "300",
        "--dropout",
        "0.1",
    ]
    rng = random.Random(2026)
    for trial in range(2):
        run = tmp_path / f"killed{trial}"
        cmd = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc_per_node",
            "2",
            "--master_addr",
            "127.0.0.1",
            "--master_port",
            str(free_port()),
            "-m",
            "core",
            "train",
            *args,
            "--out",
            str(run),
        ]
        proc = subprocess.Popen(
            cmd,
            cwd=ROOT,
            env={**os.environ, "OMP_NUM_THREADS": "1"},
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.time() + 300
        while not (run / "options.json").exists() and time.time() < deadline and proc.poll() is None:
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, 2.0))
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(60)
        res = torchrun(*args, "--out", str(run), "--resume")  # the original command, plus --resume
        assert res.returncode == 0, res.stderr[-2000:]
        a = load_file(str(newest_complete_save(root / "ddp_drop")[0] / "model.safetensors"))
        b = load_file(str(newest_complete_save(run)[0] / "model.safetensors"))
        for k in a:
            assert torch.equal(a[k], b[k]), (trial, k)
        assert [s for s, _, _ in curve(run)] == list(range(1, STEPS + 1))  # no duplicated or missing step
