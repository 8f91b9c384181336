"""Learn steps of a lecture (gui/state/lecture_learn.py, lecture_learn_pages.py, gui/window/lecture_learn.py,
gui/export/learn_slide.py): ``learn = "copy"`` parses, saves and names its problems by step and field;
in Present mode the step trains the Learn tab's run and draws the probe pair's cross-attention, which
after a short run from seed 0 is the run's own (an independent session) and puts every row's argmax
on the known alignment; ↑ / ↓ scrub the snapshots; leaving the step mid-training pauses the run and
coming back goes on; the deck renders a learn page the same way twice from the seed."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtCore, QtGui

from core.training.live_session import LiveSession, LiveSettings
from core.training.toy_tasks import PRESET_UPDATES
from gui.state import lecture_learn
from gui.state.lecture import parse_lecture
from gui.state.lecture_check import check_lecture
from gui.state.lecture_learn import LearnPart
from gui.state.lecture_learn_pages import learn_frame, strip_indices
from gui.state.lecture_toml import lecture_toml
from tests.support import tiny_config

pytest.importorskip("tomllib")
WAIT_MS = 180_000  # a shared machine: 400 updates of the default settings take about 17 s on one idle core
A = "집에 누군가 있어?"


def lecture_text(learn: str) -> str:
    return f'''title = "Learning"

[[steps]]
sentence = "{A}"
caption = "First."

[[steps]]
{learn}
caption = "Watch it learn."

[[steps]]
sentence = "{A}"
view = "encoder"
caption = "Third."
'''


def test_a_learn_step_parses_saves_and_needs_no_sentence():
    lec = parse_lecture(lecture_text('learn = "reverse"\nseed = 3\nlayer = 2\nhead = 4'))
    step = lec.steps[1]
    assert step.learn == LearnPart("reverse", PRESET_UPDATES["reverse"], 50, 3, 2, 4)
    assert step.title == "Learning: reverse" and step.caption == "Watch it learn." and step.errors == []
    assert not step.live and not step.learn.follow_best
    assert "seed 3" in step.settings() and "layer 2 head 4" in step.settings()
    assert check_lecture(lec, tiny_config()) == []  # nothing of the translation model applies
    back = parse_lecture(lecture_toml(lec.title, lec.steps))
    assert [s.learn for s in back.steps] == [s.learn for s in lec.steps]
    assert [s.title for s in back.steps] == [s.title for s in lec.steps]
    assert 'learn = "reverse"' in lecture_toml(lec.title, lec.steps) and "updates" not in lecture_toml(lec.title, lec.steps)
    best = parse_lecture(lecture_text('learn = "copy"\nupdates = 120\nevery = 40')).steps[1].learn
    assert best == LearnPart("copy", 120, 40, 0, None, None) and best.follow_best


def test_the_learn_step_knows_the_learn_tabs_defaults():
    d = LiveSettings()
    assert (lecture_learn.LAYERS, lecture_learn.HEADS, lecture_learn.D_MODEL) == (d.layers, d.n_heads, d.d_model)
    assert lecture_learn.PRESETS == {t: PRESET_UPDATES[t] for t in lecture_learn.LEARN_TASKS}


def test_bad_learn_fields_name_the_step_and_the_field():
    bad = 'learn = "transpose"\nupdates = 0\nevery = "often"\nsentence = "나는"\nlayer = 3\nhaed = 1'
    step = parse_lecture(lecture_text(bad)).steps[1]
    assert sorted(step.errors) == sorted(
        [
            "lecture step 2, learn: 'transpose' is not one of copy, reverse, sort, numbers (the tasks whose alignment is known)",
            "lecture step 2, updates: must be 1..20000, got 0",
            "lecture step 2, every: must be a whole number, got 'often'",
            "lecture step 2, sentence: not a field of a learn step "
            "(a learn step takes learn, title, updates, every, seed, layer, head, caption)",
            "lecture step 2, layer: must be 1..2 (the toy model has 2 decoder layers), got 3",
            "lecture step 2, haed: not a field of a learn step (did you mean 'head'?)",
            "lecture step 2, head: layer and head go together (without both: the best head)",
        ]
    )
    assert step.learn is None and not step.ok
    assert check_lecture(parse_lecture(lecture_text(bad)), tiny_config())[0].startswith("lecture step 2")
    assert parse_lecture(lecture_text("learn = 3")).steps[1].errors == ["lecture step 2, learn: must be a string, got 3"]


def test_strip_and_frame():
    assert strip_indices(17) == [0, 5, 11] and strip_indices(2) == [0] and strip_indices(1) == []
    session = LiveSession("copy", LiveSettings(d_model=16, n_heads=2, layers=1, d_ff=32, batch_size=8), seed=0)
    snap = session.snapshot()
    step = parse_lecture(lecture_text('learn = "copy"\nlayer = 1\nhead = 2')).steps[1]
    f = learn_frame(step, snap)
    m = snap.evaluation.maps
    assert f.key == (0, 1)
    np.testing.assert_array_equal(f.matrix, m.cross[0, 1])
    rows = m.known_alignment.any(-1)
    assert f.scored == int(rows.sum()) == len(m.src_tokens) - 1  # one row per letter (those predicting [EOS] are not scored)
    assert f.hits == sum(bool(m.known_alignment[t, m.cross[0, 1, t].argmax()]) for t in np.flatnonzero(rows))


# ---------------------------------------------------------------------------------------------- in the window


def _present(qtbot, window, text: str):
    from gui.window.lecture import open_lecture

    driver = open_lecture(window, parse_lecture(text))
    qtbot.waitUntil(lambda: driver.done and driver.index == 0, timeout=WAIT_MS)
    return driver, window.present_window


def test_present_mode_trains_the_step_and_shows_the_learned_alignment(qtbot, window):
    driver, pw = _present(qtbot, window, lecture_text('learn = "copy"\nupdates = 400'))
    qtbot.keyClick(pw, QtCore.Qt.Key.Key_Right)
    qtbot.waitUntil(lambda: driver.index == 1 and bool(driver.learning.snapshots), timeout=WAIT_MS)
    assert "2 / 3 · Learning: copy — update " in driver.page.heading
    qtbot.waitUntil(lambda: driver.done, timeout=WAIT_MS)
    snaps = driver.learning.snapshots
    assert [s.updates for s in snaps] == list(range(0, 401, 50))
    assert driver.page.heading == "2 / 3 · Learning: copy — update 400 / 400"
    ref = LiveSession("copy", LiveSettings(), seed=0)  # the same run, independently
    ref.step(400)
    ev = ref.evaluate()
    assert snaps[-1].evaluation.heldout_nll == ev.heldout_nll
    layer, head = ev.best_head
    qtbot.waitUntil(lambda: pw.heatmap.matrix is not None and pw.heatmap.matrix.shape == ev.maps.cross.shape[2:], timeout=5000)
    np.testing.assert_array_equal(pw.heatmap.matrix, ev.maps.cross[layer, head])
    assert pw.heatmap.row_tokens == ev.maps.tgt_tokens and pw.heatmap.col_tokens == ev.maps.src_tokens
    letters = [t for t in ev.maps.src_tokens if t != "[EOS]"]
    argmax = pw.heatmap.matrix.argmax(-1)
    assert list(argmax[: len(letters)]) == list(range(len(letters)))  # copy: row t on source t, the diagonal
    assert f"layer {layer + 1} head {head + 1}, update 400" in driver.page.drawn
    assert f"{len(letters)} of {len(letters)} rows" in driver.page.note
    assert "Watch it learn." in driver.bar_label.text()
    assert window.live.tabs.currentWidget() is window.slots.get("learn")  # the main window shows the Learn tab
    assert "↓ ↑ snapshot" in pw.help.text()
    qtbot.keyClick(pw, QtCore.Qt.Key.Key_Up)  # one snapshot back
    early = snaps[-2].evaluation
    np.testing.assert_array_equal(pw.heatmap.matrix, early.maps.cross[early.best_head])
    assert driver.page.heading.endswith("update 350 / 400")
    qtbot.keyClick(pw, QtCore.Qt.Key.Key_Down)
    assert driver.page.heading.endswith("update 400 / 400")
    qtbot.keyClick(pw, QtCore.Qt.Key.Key_Right)  # the next step: the translation again
    qtbot.waitUntil(lambda: driver.done and driver.index == 2, timeout=WAIT_MS)
    assert pw.heatmap.row_tokens == window.vm.result.maps.src_tokens  # encoder self-attention of the sentence
    assert "↓ ↑ decoder step" in pw.help.text()
    qtbot.keyClick(pw, QtCore.Qt.Key.Key_Left)  # back: the finished run replays from update 0
    qtbot.waitUntil(lambda: driver.index == 1, timeout=WAIT_MS)
    assert driver.learning.playing and driver.learning.index == 0 and driver.page.heading.endswith("update 0 / 400")
    qtbot.waitUntil(lambda: not driver.learning.playing, timeout=10_000)
    assert driver.learning.index == len(snaps) - 1 and len(driver.learning.snapshots) == len(snaps)  # not trained again


def test_leaving_the_step_mid_training_pauses_it_and_coming_back_goes_on(qtbot, window):
    driver, pw = _present(qtbot, window, lecture_text('learn = "reverse"\nupdates = 20000\nevery = 2'))
    driver.next()
    panel = window.slots.get("learn")
    driver.next()  # away at once, while the model is still being built: its training never starts
    qtbot.waitUntil(lambda: panel.training is None and driver.done and driver.index == 2, timeout=WAIT_MS)
    qtbot.wait(600)
    assert panel.worker.session is None or panel.worker.session.updates == 0
    driver.previous()
    qtbot.waitUntil(lambda: len(driver.learning.snapshots) >= 3, timeout=WAIT_MS)
    assert panel.training is not None and not driver.done
    driver.next()
    qtbot.waitUntil(lambda: panel.training is None, timeout=WAIT_MS)  # stopped before its next update
    qtbot.waitUntil(lambda: driver.done and driver.index == 2, timeout=WAIT_MS)
    updates = panel.worker.session.updates
    qtbot.wait(600)
    assert panel.worker.session.updates == updates < 20000  # nothing trains behind the next step
    assert "paused at update" in panel.status.text()
    kept = len(panel.snapshots)
    driver.previous()
    qtbot.waitUntil(lambda: len(panel.snapshots) > kept + 1, timeout=WAIT_MS)  # the same run goes on
    assert panel.snapshots[kept].updates > updates and panel.training is not None
    driver.next()
    driver.previous()  # away and straight back, before the pause took effect: the run still goes on
    n = len(panel.snapshots)
    qtbot.waitUntil(lambda: len(panel.snapshots) > n + 2, timeout=WAIT_MS)
    assert panel.training is not None and driver.index == 1
    driver.detach()  # closing the lecture stops it too
    qtbot.waitUntil(lambda: panel.training is None, timeout=WAIT_MS)


def test_the_deck_renders_a_learn_page_from_the_seed(qtbot, window, tmp_path):
    from gui.window.lecture_deck import render_deck

    lec = parse_lecture(lecture_text('learn = "copy"\nupdates = 6\nevery = 2\nseed = 4'))
    images = []
    for name in ("a", "b"):
        files = render_deck(window, lec, tmp_path / name, timeout_s=WAIT_MS / 1000)
        assert [f.name for f in files][:3] == ["step-01.png", "step-02.png", "step-03.png"]
        img = QtGui.QImage(str(tmp_path / name / "step-02.png"))
        assert (img.width(), img.height()) == (1920, 1080)
        images.append(img)
    assert images[0] == images[1]  # the same seed: the same run, pixel for pixel
    md = (tmp_path / "a" / "captions.md").read_text(encoding="utf-8")
    assert "## 2 / 3 · Learning: copy — update 6 / 6" in md
    ref = LiveSession("copy", LiveSettings(), seed=4)
    ref.step(6)
    ev = ref.evaluate()
    assert f"held-out loss {ev.heldout_nll:.3f} nats/token" in md
    key = ev.best_head
    assert f"layer {key[0] + 1} head {key[1] + 1}, update 6" in md
    known, w = ev.maps.known_alignment, ev.maps.cross[key]
    rows = np.flatnonzero(known.any(-1))
    assert f"{int(known[rows, w[rows].argmax(-1)].sum())} of {len(rows)} rows" in md


def test_a_learn_step_with_problems_shows_them(qtbot, window):
    driver, _ = _present(qtbot, window, lecture_text('learn = "transpose"'))
    driver.next()
    qtbot.waitUntil(lambda: driver.done and driver.index == 1, timeout=WAIT_MS)
    assert driver.page.error.startswith("lecture step 2, learn: 'transpose' is not one of")
    assert driver.page.heading == "2 / 3 · Learning: transpose" and driver.learning.step is None
    assert not window.slots.is_built("learn")  # nothing was trained
