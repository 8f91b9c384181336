"""Live training of toy tasks: the known alignments, the agreement score, and short runs in which
a cross-attention head learns the alignment (the 60-second target is in bench/learn.py)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

from core.errors import InputError
from core.training.alignment import best_head, head_agreement, probe_batch
from core.training.live_session import LiveSession, LiveSettings
from core.training.toy_tasks import korean_number, make_task


@pytest.fixture(autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_number_words_and_their_alignment():
    assert korean_number(321) == ("삼백이십일", ((0,), (2,), (4,)))
    assert korean_number(100) == ("백", ((0,), (), ()))  # the 1 of 백 is the place word; zeros align to nothing
    assert korean_number(302) == ("삼백이", ((0,), (), (2,)))
    assert korean_number(8816) == ("팔천팔백십육", ((0,), (2,), (4,), (5,)))
    assert korean_number(2020) == ("이천이십", ((0,), (), (2,), ()))
    with pytest.raises(ValueError, match="1..9999"):
        korean_number(10_000)


def test_tasks_hold_out_their_probe_set_and_know_the_alignment():
    for name in ("copy", "reverse", "sort", "numbers"):
        task = make_task(name, seed=3)
        assert not {(e.src, e.tgt) for e in task.probe} & {(e.src, e.tgt) for e in task.train}
        for e in task.probe:
            for t, positions in enumerate(e.alignment):
                assert all(e.src[p] == e.tgt[t] for p in positions) or name == "numbers"
    rev = make_task("reverse", seed=3).probe[0]
    assert rev.tgt == rev.src[::-1] and rev.alignment[0] == (len(rev.src) - 1,)
    assert make_task("copy", seed=3).probe == make_task("copy", seed=3).probe  # deterministic


def test_agreement_counts_row_argmax_on_allowed_positions():
    task = make_task("copy", seed=0)
    p = probe_batch(task, task.probe[:4])
    b, t, s = p.allowed.shape
    diagonal = p.allowed.float() + 1e-3 * torch.rand(b, t, s)  # argmax on the known position
    first = torch.zeros(b, t, s)
    first[..., 0] = 1.0  # every row on source position 0: right only for target position 0
    cross = [torch.stack([diagonal, first], dim=1)]  # one layer, two heads [B, 2, T, S]
    agreement = head_agreement(cross, p.allowed, p.scored)
    assert agreement.shape == (1, 2)
    assert agreement[0, 0] == 1.0
    assert agreement[0, 1] == pytest.approx(4 / int(p.scored.sum()))  # one scored row per example
    assert best_head(agreement) == (0, 0, 1.0)


def test_copy_learns_the_diagonal_in_a_short_run():
    session = LiveSession("copy", LiveSettings(), seed=0)
    before = session.evaluate()
    session.step(250)
    ev = session.evaluate()
    assert before.alignment < 0.5
    assert ev.alignment >= 0.95
    layer, head = ev.best_head
    assert ev.head_agreement[layer, head] == ev.alignment
    cross = ev.maps.cross[layer, head]  # [T, S] of probe 0
    known = ev.maps.known_alignment
    rows = known.any(-1)
    assert (known[rows, cross[rows].argmax(-1)]).mean() >= 0.8
    np.testing.assert_allclose(ev.maps.cross.sum(-1), 1.0, atol=1e-5)


def test_numbers_learns_its_alignment_in_a_short_run():
    session = LiveSession("numbers", LiveSettings(), seed=0)
    session.step(300)
    ev = session.evaluate()
    assert ev.alignment >= 0.9
    assert ev.accuracy >= 0.9


def test_same_seed_same_run_and_reset_repeats_it():
    a = LiveSession("reverse", LiveSettings(d_model=32, layers=1, dropout=0.1), seed=5)
    b = LiveSession("reverse", LiveSettings(d_model=32, layers=1, dropout=0.1), seed=5)
    la = [a.step(2).train_loss for _ in range(3)]
    torch.manual_seed(123)  # other use of the global generator between steps changes nothing
    lb = [b.step(2).train_loss for _ in range(3)]
    assert la == lb
    a.reset()
    assert a.updates == 0 and not a.snapshots
    assert [a.step(2).train_loss for _ in range(3)] == la


def test_snapshots_are_picklable_and_causal_off_shows_no_mask():
    s = LiveSession("copy", LiveSettings(d_model=32, layers=1, causal=False), seed=1)
    s.step(3)
    snap = s.snapshot()
    back = pickle.loads(pickle.dumps(snap))
    assert back.updates == 3 and s.snapshots == [snap]
    m = back.evaluation.maps
    t, n_src = len(m.tgt_tokens), len(m.src_tokens)
    assert m.cross.shape == (1, 4, t, n_src) and m.decoder_self.shape == (1, 4, t, t)
    assert m.src_tokens[-1] == "[EOS]" and m.tgt_tokens[0] == "[BOS]"
    assert not m.decoder_self_mask.any()
    assert (m.decoder_self[0, :, 0, 1:] > 0).all()  # without the mask the first row sees the future
    on = LiveSession("copy", LiveSettings(d_model=32, layers=1), seed=1).evaluate().maps
    assert on.decoder_self_mask[0, 1:].all() and (on.decoder_self[0, :, 0, 1:] == 0).all()


def test_file_task_reads_pairs_and_refuses_a_bad_file(tmp_path):
    good = tmp_path / "pairs.tsv"
    good.write_text("# header\n" + "".join(f"{i}\t{i * 2}\n" for i in range(1, 31)), encoding="utf-8")
    task = make_task("file", path=good)
    assert len(task.probe) == 3 and len(task.train) == 27 and not task.has_alignment
    ev = LiveSession(task, LiveSettings(d_model=32, layers=1)).evaluate()
    assert ev.alignment is None and ev.maps.known_alignment is None
    bad = tmp_path / "bad.tsv"
    bad.write_text("하나\tone\n둘 two\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.tsv, line 2: no tab"):
        make_task("file", path=bad)
    with pytest.raises(InputError, match="no such file"):
        make_task("file", path=tmp_path / "missing.tsv")
    (tmp_path / "latin1.tsv").write_bytes("caf\xe9\tcafe\n".encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8"):
        make_task("file", path=tmp_path / "latin1.tsv")
    with pytest.raises(InputError, match="at least 10"):
        make_task("file", path=_write(tmp_path / "few.tsv", "a\tb\n"))
    with pytest.raises(ValueError, match="unknown task"):
        make_task("translate")
    with pytest.raises(ValueError, match="not divisible"):
        LiveSession("copy", LiveSettings(d_model=30, n_heads=4))


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path
