"""Adapting a checkpoint to a few pairs: the new model learns them, is saved in the checkpoint format
with a card saying what it was adapted on, and the base is never touched. (ko-en-nc on the
lecturer's 20 pairs, with timing and Tatoeba chrF: bench/adapt.py.)"""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
import torch

from core.__main__ import main as cli
from core.checkpoints.checkpoint import load_checkpoint
from core.errors import CheckpointError, InputError
from core.evaluation.evaluate import translate_corpus
from core.training.adapt import AdaptCancelled, adapt
from core.training.adapt_options import AdaptOptions
from core.training.replay import choose_replay, load_replay
from tests.support import FIXTURES, save_tiny

KO = (FIXTURES / "tiny.ko").read_text(encoding="utf-8").splitlines()
EN = (FIXTURES / "tiny.en").read_text(encoding="utf-8").splitlines()
MINE = list(zip(KO[:3], EN[:3]))
FAST = AdaptOptions(steps=120, warmup=10, lr_scale=0.1, seed=3)


@pytest.fixture
def base(tmp_path, tiny_checkpoint):
    """The tiny checkpoint with a replay set of 20 other fixture pairs."""
    folder = tmp_path / "base"
    shutil.copytree(tiny_checkpoint, folder)
    (folder / "replay.tsv").write_text("# replay\n" + "".join(f"{k}\t{e}\n" for k, e in zip(KO[10:], EN[10:])), encoding="utf-8")
    return folder


def _digest(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_adapted_model_translates_its_pairs_and_says_what_it_was_adapted_on(base, tmp_path):
    before = _digest(base)
    torch.set_num_threads(1)
    ckpt0 = load_checkpoint(base, device="cpu")
    assert translate_corpus(ckpt0, [k for k, _ in MINE]) != [e for _, e in MINE]  # random weights
    seen = []
    r = adapt(base, MINE, tmp_path / "mine", "my-lecture", FAST, source="three.tsv", progress=lambda *a: seen.append(a))
    assert [s[:2] for s in seen] == [(i, 120) for i in range(1, 121)]
    assert r.pairs == 3 and r.replay_pairs == 20 and r.losses[-1] < r.losses[0]
    ckpt = load_checkpoint(r.path, device="cpu")
    assert translate_corpus(ckpt, [k for k, _ in MINE]) == [e for _, e in MINE]
    card = (r.path / "README.md").read_text(encoding="utf-8")
    assert card.startswith("# my-lecture") and "Adapted" in card and "3 pair(s) from three.tsv" in card
    assert f"- {KO[0]} → {EN[0]}" in card
    record = json.loads((r.path / "adapted.json").read_text(encoding="utf-8"))
    assert record["pairs"] == [list(p) for p in MINE] and record["options"]["steps"] == 120
    assert load_replay(r.path) == load_replay(base)  # the result can be adapted again
    assert _digest(base) == before
    again = adapt(base, MINE, tmp_path / "mine2", "my-lecture", FAST)
    assert again.losses == r.losses  # same seed, same run


def test_cancel_writes_nothing_and_bad_input_is_refused(base, tmp_path):
    calls = []

    def cancel_at_five():
        calls.append(1)
        return len(calls) > 5

    with pytest.raises(AdaptCancelled, match="after 5 of 120 updates"):
        adapt(base, MINE, tmp_path / "c", "c", FAST, should_cancel=cancel_at_five)
    assert not (tmp_path / "c").exists() and not list(tmp_path.glob(".c.partial-*"))
    with pytest.raises(InputError, match="no pairs"):
        adapt(base, [], tmp_path / "x", "x")
    with pytest.raises(InputError, match="steps must be 1 to 1000"):
        adapt(base, MINE, tmp_path / "x", "x", AdaptOptions(steps=0))
    with pytest.raises(CheckpointError, match="one of the input checkpoints"):
        adapt(base, MINE, base, "x", FAST)
    (base / "replay.tsv").unlink()
    with pytest.raises(InputError, match="ships no replay.tsv"):
        adapt(base, MINE, tmp_path / "x", "x", FAST)
    assert not (tmp_path / "x").exists()


def test_cli_adapts_and_reports_a_bad_pairs_file_in_one_line(base, tmp_path, capsys):
    good = tmp_path / "pairs.tsv"
    good.write_text("".join(f"{k}\t{e}\n" for k, e in MINE), encoding="utf-8")
    code = cli(
        ["adapt", "--checkpoint", str(base), "--pairs", str(good), "--out", str(tmp_path / "m"), "--name", "m", "--steps", "3"]
    )
    assert code == 0 and "adapted base on 3 pairs in 3 updates" in capsys.readouterr().out
    assert load_checkpoint(tmp_path / "m", device="cpu").config == load_checkpoint(base, device="cpu").config
    bad = tmp_path / "bad.tsv"
    bad.write_text(f"{KO[0]}\t{EN[0]}\n{KO[1]} {EN[1]}\n", encoding="utf-8")
    code = cli(["adapt", "--checkpoint", str(base), "--pairs", str(bad), "--out", str(tmp_path / "n"), "--name", "n"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1] == f"error: {bad}, line 2: no tab; each line must be source<TAB>target"
    assert not (tmp_path / "n").exists()


def test_replay_choice_skips_sentences_near_an_evaluation_line():
    pairs = [
        ("고양이가 의자 위에서 자고 있다.", "A cat is sleeping on a chair."),
        ("오늘은 날씨가 정말 좋네요.", "The weather is nice today."),
    ]
    chosen = choose_replay(pairs, exclude=["고양이가 의자 위에서 자고 있어요."], n=5)
    assert chosen == [pairs[1]]


def test_base_weight_mixes_the_adapted_weights_with_the_base(base, tmp_path):
    short = AdaptOptions(steps=3, warmup=1, lr_scale=0.1, seed=2)
    plain = adapt(base, MINE, tmp_path / "plain", "p", short)
    mixed = adapt(base, MINE, tmp_path / "mixed", "m", AdaptOptions(**{**short.__dict__, "base_weight": 0.25}))
    w0 = load_checkpoint(base, device="cpu").model.state_dict()
    w1 = load_checkpoint(plain.path, device="cpu").model.state_dict()
    w2 = load_checkpoint(mixed.path, device="cpu").model.state_dict()
    assert any(not torch.equal(w0[k], w1[k]) for k in w0)
    for k in w0:
        torch.testing.assert_close(w2[k], 0.75 * w1[k] + 0.25 * w0[k], rtol=1e-5, atol=1e-6)


def test_without_dropout_the_updates_do_not_depend_on_the_dropout_seed(tmp_path, tiny_tokenizers):
    """One pair and no replay: every update trains on the same batch, so the seed only draws the
    dropout masks. With ``dropout=False`` two seeds give the same losses; with dropout they differ."""
    torch.set_num_threads(1)
    base = save_tiny(tmp_path / "dropout", tiny_tokenizers, seed=1, dropout=0.3)
    one = MINE[:1]

    def losses(seed: int, dropout: bool) -> list[float]:
        opts = AdaptOptions(steps=6, warmup=2, lr_scale=0.1, replay=0, seed=seed, dropout=dropout)
        return adapt(base, one, tmp_path / f"s{seed}-{dropout}", "x", opts).losses

    assert load_checkpoint(base, device="cpu").config.dropout > 0
    assert losses(1, dropout=False) == losses(2, dropout=False)
    assert losses(1, dropout=True) != losses(2, dropout=True)


def test_hold_general_on_the_command_line_is_the_tabs_recipe():
    """``python -m core adapt`` holds general translations unless told not to; an option given keeps
    its value; the benchmark's parser (``hold_general=False``) takes the options as given."""
    import argparse

    from core.training.adapt_cli import add_option_arguments, options_from_args
    from core.training.adapt_options import HOLD_GENERAL, HOLD_STEPS

    p = argparse.ArgumentParser()
    add_option_arguments(p)
    held = options_from_args(p.parse_args(["--seed", "4"]))
    assert held.steps == HOLD_STEPS and held.seed == 4
    assert {k: getattr(held, k) for k in HOLD_GENERAL} == HOLD_GENERAL and held.dropout is False
    assert options_from_args(p.parse_args(["--steps", "7"])).steps == 7
    mine = options_from_args(p.parse_args(["--lr-scale", "0.05", "--dropout"]))
    assert mine.lr_scale == 0.05 and mine.dropout is True and mine.replay_own and mine.stop_when_learned
    assert options_from_args(p.parse_args(["--no-hold-general"])) == AdaptOptions()
    bench = argparse.ArgumentParser()
    add_option_arguments(bench, hold_general=False)
    assert options_from_args(bench.parse_args([])) == AdaptOptions()
    assert options_from_args(bench.parse_args(["--hold-general"])) == held.__class__(
        **{**AdaptOptions().__dict__, **HOLD_GENERAL, "steps": HOLD_STEPS}
    )
