"""Continuing the training run's Adam when adapting: the moments are read from a run's step folder or
a checkpoint's adam_moments.safetensors, the optimizer starts from them, and its first update is
Adam's (checked against the formula written out here and against the run's own next update)."""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from core.checkpoints.checkpoint import load_checkpoint, save_checkpoint
from core.errors import InputError
from core.training import adapt_moments as am
from core.training.adapt import adapt
from core.training.adapt_options import AdaptOptions
from core.training.data import collate, encode_pairs
from core.training.state import save_train_state
from core.training.step import ADAM_BETAS, ADAM_EPS, make_optimizer, train_step
from tests.support import FIXTURES

KO = (FIXTURES / "tiny.ko").read_text(encoding="utf-8").splitlines()
EN = (FIXTURES / "tiny.en").read_text(encoding="utf-8").splitlines()


def _batch(ckpt, lo, hi):
    c = ckpt.config
    enc = encode_pairs(list(zip(KO[lo:hi], EN[lo:hi])), ckpt.src_tokenizer, ckpt.tgt_tokenizer, c.max_len, c.eos_id, c.bos_id)
    return collate(enc, list(range(len(enc))), c.pad_id)


@pytest.fixture
def run(tmp_path, tiny_checkpoint):
    """A 'training run' of 4 updates on the tiny checkpoint: its step folder (weights, train state),
    a checkpoint of the same weights with a replay set, and the run's optimizer after those updates."""
    torch.manual_seed(0)
    ckpt = load_checkpoint(tiny_checkpoint, device="cpu")
    model = ckpt.model.train()
    opt = make_optimizer(model)
    for step in range(1, 5):
        train_step(model, opt, *_batch(ckpt, 4 * step, 4 * step + 4), lr=3e-3)
    model.eval()
    folder = save_checkpoint(tmp_path / "ckpt", model, ckpt.src_tokenizer, ckpt.tgt_tokenizer)
    (folder / "replay.tsv").write_text("".join(f"{k}\t{e}\n" for k, e in zip(KO[20:], EN[20:])), encoding="utf-8")
    step_dir = tmp_path / "run" / "step_4"
    step_dir.mkdir(parents=True)
    shutil.copy(folder / "model.safetensors", step_dir / "model.safetensors")
    save_train_state(step_dir, opt, {"step": 4})
    return step_dir, folder, model, opt


def test_moments_of_a_run_are_named_after_the_parameters_and_round_trip_through_bf16(run, tmp_path):
    step_dir, folder, model, opt = run
    moments = am.read_train_state(step_dir, model)
    assert moments.step == 4
    for name, p in model.named_parameters():
        assert torch.equal(moments.exp_avg_sq[name], opt.state[p]["exp_avg_sq"])
        assert torch.equal(moments.exp_avg[name], opt.state[p]["exp_avg"])
    size = am.write_moments(tmp_path / am.MOMENTS, moments, "abc")
    assert size == (tmp_path / am.MOMENTS).stat().st_size
    back = am.read_moments(tmp_path / am.MOMENTS, model)
    assert back.step == 4 and back.exp_avg == {}
    for name, v in moments.exp_avg_sq.items():
        assert torch.equal(back.exp_avg_sq[name], v.to(torch.bfloat16).float())
        rel = (back.exp_avg_sq[name] - v).abs() / v.clamp_min(1e-30)
        assert float(rel.max()) <= 2**-8  # bf16 keeps 8 significant bits
    other = torch.nn.Linear(3, 2)
    with pytest.raises(ValueError, match="the model has 2"):
        am.read_train_state(step_dir, torch.nn.Sequential(other))


def test_warm_start_gives_adam_the_moments_and_its_first_update_is_adams(run):
    step_dir, folder, model, run_opt = run
    moments = am.read_train_state(step_dir, model)
    warm = load_checkpoint(folder, device="cpu").model.train()
    opt = make_optimizer(warm)
    assert am.warm_start_adam(opt, warm, moments, exp_avg=True) == len(list(warm.parameters()))
    for name, p in warm.named_parameters():
        st = opt.state[p]
        assert float(st["step"]) == 4.0
        assert torch.equal(st["exp_avg_sq"], moments.exp_avg_sq[name])
        assert torch.equal(st["exp_avg"], moments.exp_avg[name])
    # the first update, against Adam written out (Kingma & Ba 2015, Alg. 1) with t = 5
    lr, (b1, b2), t = 1e-3, ADAM_BETAS, 5
    before = {n: p.detach().clone() for n, p in warm.named_parameters()}
    torch.manual_seed(5)
    grads = {n: torch.randn_like(p) * 1e-3 for n, p in warm.named_parameters()}
    for n, p in warm.named_parameters():
        p.grad = grads[n].clone()
    opt.param_groups[0]["lr"] = lr
    opt.step()
    for n, p in warm.named_parameters():
        m = b1 * moments.exp_avg[n] + (1 - b1) * grads[n]
        v = b2 * moments.exp_avg_sq[n] + (1 - b2) * grads[n] ** 2
        expect = before[n] - lr * (m / (1 - b1**t)) / ((v / (1 - b2**t)).sqrt() + ADAM_EPS)
        torch.testing.assert_close(p.detach(), expect, rtol=1e-5, atol=1e-8)
    # and against the run's own optimizer making the same update: the run continued exactly
    for n, p in model.named_parameters():
        p.grad = grads[n].clone()
    run_opt.param_groups[0]["lr"] = lr
    run_opt.step()
    for (n, p), (_, q) in zip(model.named_parameters(), warm.named_parameters()):
        assert torch.equal(p.detach(), q.detach()), n


def test_without_the_first_moment_it_starts_at_zero_and_frozen_parameters_stay_fresh(run):
    step_dir, folder, model, _ = run
    moments = am.read_train_state(step_dir, model)
    warm = load_checkpoint(folder, device="cpu").model.train()
    first = next(p for n, p in warm.named_parameters() if n.startswith("encoder_layers.0"))
    first.requires_grad_(False)
    opt = make_optimizer(warm)
    n = am.warm_start_adam(opt, warm, moments, exp_avg=False)
    assert n == len(list(warm.parameters())) - 1 and first not in opt.state
    for name, p in warm.named_parameters():
        if p.requires_grad:
            assert torch.equal(opt.state[p]["exp_avg"], torch.zeros_like(p))
            assert torch.equal(opt.state[p]["exp_avg_sq"], moments.exp_avg_sq[name])


def test_the_command_writes_moments_only_for_the_same_weights_and_adapt_uses_them(run, tmp_path, capsys):
    step_dir, folder, model, _ = run
    assert am.shipped_moments(folder) is None
    assert am.main([str(step_dir), str(folder)]) == 0
    assert "step 4" in capsys.readouterr().out
    assert am.shipped_moments(folder) == folder / am.MOMENTS
    with pytest.raises(SystemExit, match="its moments belong to other weights"):
        other = tmp_path / "other"
        shutil.copytree(step_dir, other)
        (other / "model.safetensors").write_bytes((other / "model.safetensors").read_bytes()[:-4] + b"\0\0\0\0")
        am.main([str(other), str(folder)])
    pairs = list(zip(KO[:3], EN[:3]))
    opts = dict(steps=3, warmup=2, lr_scale=0.1, seed=3)
    fresh = adapt(folder, pairs, tmp_path / "fresh", "f", AdaptOptions(**opts, moments="none"))
    auto = adapt(folder, pairs, tmp_path / "auto", "a", AdaptOptions(**opts))  # default: the shipped file
    given = adapt(folder, pairs, tmp_path / "given", "g", AdaptOptions(**opts, moments=str(folder / am.MOMENTS)))
    assert fresh.losses[0] == auto.losses[0] and fresh.losses[1] != auto.losses[1]  # same start, other updates
    assert auto.losses == given.losses
    record = json.loads((tmp_path / "auto" / "adapted.json").read_text(encoding="utf-8"))
    assert record["moments_from"] == str(folder / am.MOMENTS)
    assert "Adam continued from its training run" in (tmp_path / "auto" / "README.md").read_text(encoding="utf-8")
    assert json.loads((tmp_path / "fresh" / "adapted.json").read_text(encoding="utf-8"))["moments_from"] is None
    # without the file (or with one for other weights) "auto" is the fresh Adam it was before
    (folder / am.MOMENTS).rename(tmp_path / "kept.safetensors")
    absent = adapt(folder, pairs, tmp_path / "absent", "x", AdaptOptions(**opts))
    assert absent.losses == fresh.losses
    assert "fresh Adam" in (tmp_path / "absent" / "README.md").read_text(encoding="utf-8")
    moments = am.read_moments(tmp_path / "kept.safetensors")
    am.write_moments(folder / am.MOMENTS, moments, digest="0" * 64)
    assert am.shipped_moments(folder) is None and am.resolve("auto", folder) is None
    with pytest.raises(InputError, match="moments: .*neither a training step folder"):
        adapt(folder, pairs, tmp_path / "bad", "b", AdaptOptions(**opts, moments=str(tmp_path / "nothing")))
