"""The Adapt tab: fine-tune the loaded (tiny) model on the input + Reference pair, a TSV or a
lecture's references in the tab's worker thread; the before/after translations and cross-attention
equal an independent computation on the base and the saved model; a bad TSV, Cancel and closing the
window save nothing. A few updates per run: seconds per test."""

from __future__ import annotations

import html
import shutil
import time

import numpy as np
import pytest
import torch

from core.checkpoints.checkpoint import load_checkpoint
from core.decoding.translate import translate
from core.errors import InputError
from core.locations import MODELS_ENV, user_models
from gui.state import adapt_sources as sources
from gui.state.compare_data import head_map
from tests.support import FIXTURES
from tests.support.gui import open_window

KO = (FIXTURES / "tiny.ko").read_text(encoding="utf-8").splitlines()
EN = (FIXTURES / "tiny.en").read_text(encoding="utf-8").splitlines()
WAIT_MS = 120_000  # the machine may be shared with a training run


@pytest.fixture
def models(tmp_path, monkeypatch):
    """An empty user model folder for this test."""
    folder = tmp_path / "models"
    monkeypatch.setenv(MODELS_ENV, str(folder))
    return folder


@pytest.fixture
def base(tmp_path, tiny_checkpoint):
    """The tiny checkpoint with a replay set of 20 fixture pairs."""
    folder = tmp_path / "base"
    shutil.copytree(tiny_checkpoint, folder)
    (folder / "replay.tsv").write_text("".join(f"{k}\t{e}\n" for k, e in zip(KO[10:30], EN[10:30])), encoding="utf-8")
    return folder


@pytest.fixture
def win(qtbot, base, models):
    w = open_window(qtbot, base)
    yield w
    w.close()


def left_in(folder) -> list[str]:
    """What is in ``folder`` (nothing when it was never created), hidden temporary folders included."""
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def adapt_panel(win, steps: int, name: str = "my-pair"):
    panel = win.slots.get("adapt")
    panel.steps.setValue(steps)
    panel.model_name.setText(name)
    return panel


def test_one_pair_from_the_boxes_is_saved_shown_before_and_after_and_loadable(qtbot, win, base, models):
    ko, en = KO[0], EN[0]
    win.inputs.text.setText(ko)
    win.inputs.reference.setText(en)
    panel = adapt_panel(win, steps=4)
    job = panel.start()
    assert job is not None and panel.running == job and not panel.start_button.isEnabled()
    qtbot.waitUntil(lambda: panel.running is None, timeout=WAIT_MS)
    o = panel.outcome
    assert o is not None, panel.status.text()
    out = models / "my-pair"
    assert o.result.path == out and [e.name for e in user_models()] == ["my-pair"]
    assert panel.bar.value() == 4 and len(o.result.losses) == 4
    assert o.result.pairs == 1 and o.result.replay_pairs == 20  # the base's replay set was mixed in
    card = (out / "README.md").read_text(encoding="utf-8")
    assert card.startswith("# my-pair") and f"- {ko} → {en}" in card
    assert "1 pair(s) from the input and Reference boxes" in card
    # independent computation: the base and the saved folder, loaded and translated here
    torch_base, saved = load_checkpoint(base, device="cpu"), load_checkpoint(out, device="cpu")
    changed = [k for k, v in saved.model.state_dict().items() if not torch.equal(v, torch_base.model.state_dict()[k])]
    assert changed, "the saved model has the base's weights"
    before, after = translate(torch_base, ko), translate(saved, ko)
    assert [o.before[0].translation, o.after[0].translation] == [before.translation, after.translation]
    summary = panel.comparison.summary.text()
    assert html.escape(before.translation) in summary and html.escape(after.translation) in summary
    n_layers = panel.comparison.layer.maximum()
    assert panel.comparison.layer.value() == n_layers and panel.comparison.head.value() == 1
    for heatmap, result in ((panel.comparison.maps.a, before), (panel.comparison.maps.b, after)):
        expected = head_map(result, "cross", n_layers - 1, 0).weights
        np.testing.assert_array_equal(heatmap.matrix, expected)
        np.testing.assert_allclose(heatmap.matrix.sum(axis=1), 1.0, rtol=1e-5)  # rows are queries
    assert panel.load_button.isEnabled()
    panel.load_adapted()
    qtbot.waitUntil(lambda: win.checkpoint_path == str(out), timeout=WAIT_MS)


def test_pairs_from_a_tsv_and_the_chosen_sentence_and_head_are_drawn_before_and_after(qtbot, win, base, models, tmp_path):
    tsv = tmp_path / "pairs.tsv"
    tsv.write_text(f"# my two\n{KO[2]}\t{EN[2]}\n\n{KO[3]}\t{EN[3]}\n", encoding="utf-8")
    panel = adapt_panel(win, steps=3, name="two")
    panel.set_source(sources.TSV, tsv)
    panel.start()
    qtbot.waitUntil(lambda: panel.running is None, timeout=WAIT_MS)
    assert panel.outcome is not None, panel.status.text()
    card = (models / "two" / "README.md").read_text(encoding="utf-8")
    assert "2 pair(s) from pairs.tsv" in card and f"- {KO[3]} → {EN[3]}" in card
    assert [panel.comparison.sentence.itemText(i) for i in range(panel.comparison.sentence.count())] == [KO[2], KO[3]]
    panel.comparison.sentence.setCurrentIndex(1)
    panel.comparison.layer.setValue(1)
    panel.comparison.head.setValue(2)
    saved, original = load_checkpoint(models / "two", device="cpu"), load_checkpoint(base, device="cpu")
    np.testing.assert_array_equal(panel.comparison.maps.a.matrix, head_map(translate(original, KO[3]), "cross", 0, 1).weights)
    np.testing.assert_array_equal(panel.comparison.maps.b.matrix, head_map(translate(saved, KO[3]), "cross", 0, 1).weights)
    assert html.escape(translate(saved, KO[2]).translation) in panel.comparison.summary.text()


def test_a_model_without_a_replay_set_is_adapted_without_one_and_says_so(qtbot, tiny_checkpoint, models):
    win = open_window(qtbot, tiny_checkpoint)
    win.inputs.text.setText(KO[1])
    win.inputs.reference.setText(EN[1])
    panel = adapt_panel(win, steps=2, name="no-replay")
    panel.start()
    assert "ships no replay.tsv" in panel.status.text()
    qtbot.waitUntil(lambda: panel.running is None, timeout=WAIT_MS)
    assert panel.outcome is not None and panel.outcome.result.replay_pairs == 0
    assert "ships no replay.tsv" in panel.status.text() and left_in(models) == ["no-replay"]
    win.close()


def test_a_bad_tsv_is_named_by_line_and_nothing_is_saved(qtbot, win, base, models, tmp_path):
    bad = tmp_path / "mine.tsv"
    bad.write_text(f"{KO[0]}\t{EN[0]}\n{KO[1]} {EN[1]}\n", encoding="utf-8")
    panel = adapt_panel(win, steps=2)
    panel.set_source(sources.TSV, bad)
    assert panel.start() is None and panel.running is None
    assert "line 2" in panel.status.text() and "no tab" in panel.status.text()
    assert left_in(models) == []
    assert win.checkpoint_path == str(base) and win.worker.checkpoint.path == base


def test_a_model_name_that_exists_or_is_not_a_folder_name_is_refused(qtbot, win, models):
    win.inputs.text.setText(KO[0])
    win.inputs.reference.setText(EN[0])
    panel = adapt_panel(win, steps=2, name="../evil")
    assert panel.start() is None and "model name" in panel.status.text()
    (models / "taken").mkdir(parents=True)
    panel.model_name.setText("taken")
    assert panel.start() is None and "exists already" in panel.status.text()


def test_cancel_stops_before_the_next_update_and_saves_nothing(qtbot, win, models):
    win.inputs.text.setText(KO[0])
    win.inputs.reference.setText(EN[0])
    panel = adapt_panel(win, steps=1000)
    panel.start()
    qtbot.waitUntil(lambda: panel.bar.value() >= 1, timeout=WAIT_MS)
    panel.cancel_button.click()
    qtbot.waitUntil(lambda: panel.running is None, timeout=WAIT_MS)
    assert "nothing was saved" in panel.status.text() and panel.outcome is None
    assert panel.bar.value() < 1000 and panel.start_button.isEnabled() and not panel.load_button.isEnabled()
    assert left_in(models) == []  # not even a temporary folder


def test_closing_the_window_while_adapting_does_not_hang_and_saves_nothing(qtbot, base, models):
    win = open_window(qtbot, base)
    win.inputs.text.setText(KO[0])
    win.inputs.reference.setText(EN[0])
    panel = adapt_panel(win, steps=1000)
    panel.start()
    qtbot.waitUntil(lambda: panel.bar.value() >= 1, timeout=WAIT_MS)
    t0 = time.perf_counter()
    win.close()
    closed_s = time.perf_counter() - t0
    assert panel.thread.isFinished(), f"the adapt thread still runs after close ({closed_s:.1f} s)"
    assert left_in(models) == []


def test_hold_general_translations_distils_the_replay_and_mixes_the_base_back(qtbot, win, models):
    win.inputs.text.setText(KO[0])
    win.inputs.reference.setText(EN[0])
    panel = adapt_panel(win, steps=2, name="held")
    panel.hold.setChecked(True)
    assert panel.start() is not None
    qtbot.waitUntil(lambda: panel.running is None, timeout=WAIT_MS)
    assert panel.outcome is not None, panel.status.text()
    o = panel.outcome.spec.options
    assert o.replay_own and o.distill == 1.0 and o.base_weight == 0.1 and o.lr_scale == 0.02 and o.stop_when_learned
    assert not o.dropout
    assert o.steps == 2  # an update count the user set stays
    card = (models / "held" / "README.md").read_text(encoding="utf-8")
    assert "base_weight=0.1" in card and "replay_own=True" in card and "stop_when_learned=True" in card
    assert "dropout=False" in card


def test_hold_general_translations_takes_its_own_update_count_when_left_at_the_default(win):
    from core.training.adapt_options import HOLD_STEPS, AdaptOptions

    panel = win.slots.get("adapt")
    assert panel.hold.isChecked() and panel.steps.value() == HOLD_STEPS  # the tab's default recipe
    panel.hold.setChecked(False)
    panel.steps.setValue(AdaptOptions().steps)
    panel.hold.setChecked(True)
    assert panel.steps.value() == HOLD_STEPS == 100
    panel.hold.setChecked(False)
    assert panel.steps.value() == AdaptOptions().steps == 30
    panel.steps.setValue(7)
    panel.hold.setChecked(True)
    assert panel.steps.value() == 7


def test_pairs_from_a_lecture_are_its_steps_with_a_reference(tmp_path):
    lecture = tmp_path / "talk.toml"
    lecture.write_text(
        'title = "t"\n[[steps]]\nsentence = "고양이가 잔다."\n'
        '[[steps]]\nsentence = "나는 학생이다."\nreference = "I am a student."\n'
        '[[steps]]\nsentence = "나는 학생이다."\nreference = "I am a student."\n',
        encoding="utf-8",
    )
    pairs, source = sources.pairs_from_lecture(lecture)
    assert pairs == [("나는 학생이다.", "I am a student.")] and "talk.toml" in source
    (tmp_path / "none.toml").write_text('[[steps]]\nsentence = "고양이가 잔다."\n', encoding="utf-8")
    with pytest.raises(InputError, match="no step has both"):
        sources.pairs_from_lecture(tmp_path / "none.toml")
    with pytest.raises(InputError, match="Reference box"):
        sources.pairs_from_boxes("나는 학생이다.", "  ")


def test_a_run_that_stops_once_its_pairs_are_learned_says_so(qtbot, win, base, models):
    """A pair the base already translates that way is learned at the first check (after the
    10 warm-up updates): the run stops there, and the bar and the status say so."""
    from core.evaluation.evaluate import translate_corpus

    own = translate_corpus(load_checkpoint(base, device="cpu"), [KO[0]])[0]
    win.inputs.text.setText(KO[0])
    win.inputs.reference.setText(own)
    panel = adapt_panel(win, steps=100, name="early")
    assert panel.hold.isChecked()
    assert panel.start() is not None
    qtbot.waitUntil(lambda: panel.running is None, timeout=WAIT_MS)
    assert panel.outcome is not None, panel.status.text()
    assert panel.outcome.result.steps == 10
    assert (panel.bar.value(), panel.bar.maximum()) == (10, 10)
    assert "stopped early: every pair learned after 10 of 100" in panel.status.text()
