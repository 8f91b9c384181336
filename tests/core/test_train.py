"""Training loop: loss goes down, checkpoints are written in the shipped format, and --resume
continues exactly (same weights as an uninterrupted run)."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

from core.checkpoints.checkpoint import load_checkpoint
from core.training.data import DataSpec, make_batches
from core.training.schedule import learning_rate, noam_lr
from core.training.train import TrainOptions, train, training_summary
from tests.support import FIXTURES


def options(out, steps):
    return TrainOptions(
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
        max_steps=steps,
        warmup=4,
        threads=1,
        valid_every=3,
        save_every=3,
        dropout=0.1,
        seed=7,
    )


def test_resume_continues_exactly(tmp_path):
    train(options(tmp_path / "straight", 8))
    train(options(tmp_path / "split", 5))
    train(TrainOptions(train=[], valid=[], out=str(tmp_path / "split")), resume=True, overrides={"max_steps": 8})
    a = load_file(str(tmp_path / "straight" / "step_8" / "model.safetensors"))
    b = load_file(str(tmp_path / "split" / "step_8" / "model.safetensors"))
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k
    ck = load_checkpoint(tmp_path / "split" / "step_8", device="cpu")  # shipped format
    assert ck.config.d_model == 32
    summary = training_summary(tmp_path / "split")
    assert summary["steps"] == 8 and summary["valid_history"][-1]["step"] == 8
    hist = [json.loads(x) for x in (tmp_path / "straight" / "log.jsonl").read_text().splitlines()]
    assert hist[-1]["valid_nll"] < hist[0]["valid_nll"]  # it learns


def test_noam_schedule_peaks_at_warmup():
    lrs = [noam_lr(s, 256, 100, 1.0) for s in (1, 50, 100, 200, 400)]
    assert lrs[0] < lrs[1] < lrs[2] and lrs[2] > lrs[3] > lrs[4]
    assert abs(lrs[2] - 256**-0.5 * 100**-0.5) < 1e-12
    assert abs(lrs[4] / lrs[3] - (400 / 200) ** -0.5) < 1e-9


def test_batches_respect_token_budget_and_are_seeded():
    ex = [([5] * n, [1] + [6] * (n // 2) + [2]) for n in range(1, 40)]
    b1, b2 = make_batches(ex, 60, seed=3), make_batches(ex, 60, seed=3)
    assert b1 == b2 and sorted(i for b in b1 for i in b) == list(range(len(ex)))
    for b in b1:
        longest = max(max(len(ex[i][0]), len(ex[i][1])) for i in b)
        assert len(b) == 1 or len(b) * longest <= 60
    assert DataSpec.parse("a/b*3") == DataSpec("a/b", 3)


def test_pruning_keeps_the_last_step_folders_and_ignores_other_files(tmp_path):
    """keep=2 leaves the two newest step_N folders; a file named step_N-check.json (what
    `python -m core check --json` is often pointed at) is neither parsed nor deleted (it used to
    crash the run at its next save)."""
    import dataclasses

    out = tmp_path / "run"
    train(dataclasses.replace(options(out, 3), keep=2))
    (out / "step_3-check.json").write_text("{}")
    train(TrainOptions(train=[], valid=[], out=str(out)), resume=True, overrides={"max_steps": 9})
    assert sorted(p.name for p in out.glob("step_*")) == ["step_3-check.json", "step_6", "step_9"]


def test_reverse_trains_english_to_korean_on_the_same_files(tmp_path):
    """--reverse reads PREFIX.en as the source and PREFIX.ko as the target."""
    import dataclasses

    out = tmp_path / "rev"
    last = train(dataclasses.replace(options(out, 2), reverse=True))
    ck = load_checkpoint(last, device="cpu")
    src_vocab = set(ck.src_tokenizer.tokenizer.get_vocab())
    tgt_vocab = set(ck.tgt_tokenizer.tokenizer.get_vocab())
    assert any(ch in src_vocab for ch in "abcdefghijklmnopqrstuvwxyz")

    def hangul(piece):
        return any("\uac00" <= c <= "\ud7a3" for c in piece)

    assert not any(hangul(p) for p in src_vocab)  # the source side is English
    assert sum(hangul(p) for p in tgt_vocab) > 20
    assert "English→Korean" in (last / "README.md").read_text(encoding="utf-8")


def test_a_run_stopped_between_its_two_tokenizer_files_trains_them_again(tmp_path):
    from core.training.vocab import _tokenizers

    opts = options(tmp_path / "run", 1)
    pairs = [("나는 학생입니다.", "I am a student."), ("제발 앉아.", "Please sit down.")] * 20
    out = tmp_path / "run"
    out.mkdir()
    src, tgt = _tokenizers(opts, out, pairs)
    written = {n: (out / n).read_text(encoding="utf-8") for n in ("tokenizer_src.json", "tokenizer_tgt.json")}
    (out / "tokenizer_tgt.json").unlink()  # stopped after the first file: a resume must not fail on the second
    src2, tgt2 = _tokenizers(opts, out, pairs)
    assert {n: (out / n).read_text(encoding="utf-8") for n in written} == written  # the same files again
    assert tgt2.encode("I am a student.").ids == tgt.encode("I am a student.").ids


def test_cooldown_falls_linearly_to_zero_at_max_steps():
    base = [noam_lr(s, 256, 100, 0.5) for s in range(1, 101)]
    got = [learning_rate(s, 256, 100, 0.5, max_steps=100, cooldown=20) for s in range(1, 101)]
    assert got[:80] == base[:80]  # untouched before the last 20 updates
    for s in range(81, 101):
        assert abs(got[s - 1] - base[s - 1] * (100 - s) / 20) < 1e-15
    assert got[-1] == 0.0 and got[-2] > 0.0
    assert [learning_rate(s, 256, 100, 0.5, max_steps=100) for s in range(1, 101)] == base
    with pytest.raises(ValueError, match="cooldown"):
        learning_rate(5, 256, 100, 0.5, max_steps=100, cooldown=-1)


def test_a_cooldown_added_on_resume_ends_with_a_zero_rate_update(tmp_path):
    """--resume may add a cool-down (it changes only the updates still to come): the last update
    has rate 0, so Adam leaves every weight exactly where the update before left it."""
    out = tmp_path / "run"
    train(options(out, 6))
    seen = {}

    def keep(step, model):
        seen[step] = {k: v.detach().clone() for k, v in model.state_dict().items()}

    train(TrainOptions(train=[], valid=[], out=str(out)), resume=True, overrides={"max_steps": 9, "cooldown": 3}, on_step=keep)
    assert sorted(seen) == [7, 8, 9]
    for k, v in seen[9].items():
        assert torch.equal(v, seen[8][k]), k
    assert any(not torch.equal(v, seen[7][k]) for k, v in seen[8].items())  # step 8 still moved (rate 1/3)
    assert json.loads((out / "options.json").read_text())["cooldown"] == 3
