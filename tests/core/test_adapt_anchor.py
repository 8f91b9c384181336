"""What keeps an adapted model near its base: low-rank adapters start as the identity and leave
every other weight untouched, training only some parameters, the distillation term, stopping as
soon as every pair is learned, and the word distance that decides "learned"."""

from __future__ import annotations

import shutil

import pytest
import torch

from core.checkpoints.checkpoint import load_checkpoint
from core.evaluation.words import word_distance
from core.training.adapt import adapt
from core.training.adapt_anchor import add_low_rank, distill_loss, merge_low_rank, pairs_learned
from core.training.adapt_options import AdaptOptions
from tests.support import FIXTURES

KO = (FIXTURES / "tiny.ko").read_text(encoding="utf-8").splitlines()
EN = (FIXTURES / "tiny.en").read_text(encoding="utf-8").splitlines()
MINE = list(zip(KO[:3], EN[:3]))


@pytest.fixture
def base(tmp_path, tiny_checkpoint):
    """The tiny checkpoint with a replay set of 20 other fixture pairs."""
    folder = tmp_path / "base"
    shutil.copytree(tiny_checkpoint, folder)
    (folder / "replay.tsv").write_text("# replay\n" + "".join(f"{k}\t{e}\n" for k, e in zip(KO[10:], EN[10:])), encoding="utf-8")
    return folder


def _batch(model):
    g = torch.Generator().manual_seed(0)
    src = torch.randint(4, model.config.src_vocab_size, (2, 7), generator=g)
    tgt = torch.randint(4, model.config.tgt_vocab_size, (2, 5), generator=g)
    return src, tgt


def test_word_distance_counts_words_inserted_deleted_or_replaced():
    assert word_distance("The cat sat.", "the cat sat") == 0  # case and punctuation do not count
    assert word_distance("The cat sat on the mat.", "The cat sat on a mat.") == 1
    assert word_distance("I can't go", "I can go now") == 2  # replace can't, insert now
    assert word_distance("", "two words") == 2


def test_low_rank_adapters_start_as_the_identity_and_merge_into_plain_weights(tiny_checkpoint):
    torch.set_num_threads(1)
    model = load_checkpoint(tiny_checkpoint, device="cpu").model.eval()
    src, tgt = _batch(model)
    with torch.no_grad():
        before = model(src, tgt)
    keys = set(model.state_dict())
    params = add_low_rank(model, rank=2, patterns=("decoder_layers.*",))
    n_dec = sum(isinstance(m, torch.nn.Linear) for n, m in model.named_modules() if n.startswith("decoder_layers."))
    assert n_dec > 0 and len(params) == 2 * n_dec
    assert [id(p) for p in model.parameters() if p.requires_grad] == [id(p) for p in params]  # only the adapters train
    assert all(float(p.detach().abs().sum()) == 0 for p in params[1::2]) and all(
        float(p.detach().abs().sum()) > 0 for p in params[0::2]
    )
    with torch.no_grad():
        assert torch.equal(model(src, tgt), before)  # B = 0: W + B A = W exactly
        params[1].fill_(0.01)  # B of the first adapter (decoder layer 0, self-attention W^Q)
        moved = model(src, tgt)
    assert not torch.equal(moved, before)
    w = model.decoder_layers[0].self_attn.w_q
    # W + (B A)·(alpha / rank) with alpha = rank: every row of B A is 0.01 × the column sums of A
    expected = w.parametrizations.weight.original + 0.01 * params[0].sum(0, keepdim=True).expand_as(w.weight)
    torch.testing.assert_close(w.weight, expected)
    assert merge_low_rank(model) == n_dec and set(model.state_dict()) == keys
    with torch.no_grad():
        assert torch.equal(model(src, tgt), moved)


def test_adapting_with_low_rank_changes_only_the_chosen_matrices(base, tmp_path):
    torch.set_num_threads(1)
    opts = AdaptOptions(steps=4, warmup=2, lr_scale=0.5, seed=2, low_rank=2, low_rank_modules="decoder_layers.*.cross_attn.*")
    r = adapt(base, MINE, tmp_path / "lr", "lr", opts)
    w0 = load_checkpoint(base, device="cpu").model.state_dict()
    w1 = load_checkpoint(r.path, device="cpu").model.state_dict()
    assert w0.keys() == w1.keys()
    changed = {k for k in w0 if not torch.equal(w0[k], w1[k])}
    # every adapted weight moved; every other tensor, biases included, is bitwise the base's
    n_layers = load_checkpoint(base, device="cpu").config.n_decoder_layers
    assert changed == {f"decoder_layers.{i}.cross_attn.{p}.weight" for i in range(n_layers) for p in ("w_q", "w_k", "w_v", "w_o")}
    for k in changed:  # the update is of rank <= 2
        assert torch.linalg.matrix_rank(w1[k] - w0[k], atol=1e-6) <= 2


def test_train_only_freezes_every_other_parameter(base, tmp_path):
    opts = AdaptOptions(steps=3, warmup=1, lr_scale=0.5, seed=2, train_only="decoder_layers.1.*")
    r = adapt(base, MINE, tmp_path / "t", "t", opts)
    w0 = load_checkpoint(base, device="cpu").model.state_dict()
    w1 = load_checkpoint(r.path, device="cpu").model.state_dict()
    changed = {k for k in w0 if not torch.equal(w0[k], w1[k])}
    assert changed and all(k.startswith("decoder_layers.1.") for k in changed)
    assert "decoder_layers.1.ff.linear1.weight" in changed


def test_distill_loss_is_kl_from_the_teacher_over_non_pad_positions():
    g = torch.Generator().manual_seed(1)
    s, t = torch.randn(2, 3, 5, generator=g), torch.randn(2, 3, 5, generator=g)
    target = torch.tensor([[4, 4, 0], [4, 0, 0]])  # pad_id 0: three real positions
    assert float(distill_loss(t, t, target, pad_id=0)) == 0.0
    pt, ps = t.softmax(-1), s.softmax(-1)
    kl = (pt * (pt.log() - ps.log())).sum(-1)  # [2, 3]
    expected = (kl[0, 0] + kl[0, 1] + kl[1, 0]) / 3
    torch.testing.assert_close(distill_loss(s, t, target, pad_id=0), expected)


def test_distill_trains_the_pairs_and_keeps_replay_near_the_base(base, tmp_path):
    torch.set_num_threads(1)
    opts = AdaptOptions(steps=6, warmup=2, lr_scale=0.3, seed=2, distill=1.0)
    r = adapt(base, MINE, tmp_path / "d", "d", opts)
    assert r.steps == 6 and r.losses[-1] < r.losses[0]
    assert "; options: distill=1.0." in (r.path / "README.md").read_text(encoding="utf-8")
    with pytest.raises(Exception, match="distill and low_rank must be >= 0"):
        adapt(base, MINE, tmp_path / "x", "x", AdaptOptions(distill=-1.0))


def test_stop_when_learned_stops_once_every_pair_is_within_one_word(base, tmp_path):
    torch.set_num_threads(1)
    opts = AdaptOptions(steps=200, warmup=10, lr_scale=0.1, seed=3, stop_when_learned=True)
    seen = []
    r = adapt(base, MINE, tmp_path / "s", "s", opts, progress=lambda *a: seen.append(a[0]))
    assert r.steps < 200 and r.steps % 5 == 0 and seen == list(range(1, r.steps + 1))
    assert pairs_learned(load_checkpoint(r.path, device="cpu"), MINE) == len(MINE)
    assert f"{r.steps} updates" in (r.path / "README.md").read_text(encoding="utf-8")


def test_stop_when_learned_judges_the_model_as_saved_with_the_base_mixed_in(base, tmp_path):
    """With ``base_weight`` the saved weights are a mix with the base: the early stop checks that
    mix, so the saved model knows every pair; the check counts what the mixed weights translate
    and puts the trained weights back exactly."""
    from core.training.adapt import _learned_as_saved

    torch.set_num_threads(1)
    opts = AdaptOptions(steps=200, warmup=10, lr_scale=0.1, seed=3, stop_when_learned=True, base_weight=0.3)
    r = adapt(base, MINE, tmp_path / "s", "s", opts)
    assert r.steps < 200
    assert pairs_learned(load_checkpoint(r.path, device="cpu"), MINE) == len(MINE)
    # the check alone: a trained model (no mix saved: base_weight 0) checked against the base's weights
    trained = adapt(base, MINE, tmp_path / "t", "t", AdaptOptions(steps=40, warmup=10, lr_scale=0.1, seed=3))
    ck = load_checkpoint(trained.path, device="cpu")
    base_state = {k: v.clone() for k, v in load_checkpoint(base, device="cpu").model.state_dict().items()}
    before = {k: v.clone() for k, v in ck.model.state_dict().items()}
    n = _learned_as_saved(ck, MINE, base_state, AdaptOptions(base_weight=0.7))
    assert all(torch.equal(before[k], v) for k, v in ck.model.state_dict().items())  # put back exactly
    mixed = load_checkpoint(trained.path, device="cpu")
    with torch.no_grad():
        for k, v in mixed.model.named_parameters():
            v.copy_(0.3 * before[k] + 0.7 * base_state[k])
    assert n == pairs_learned(mixed, MINE)
    assert n < pairs_learned(ck, MINE)  # mostly the base again: fewer pairs than the trained weights know
