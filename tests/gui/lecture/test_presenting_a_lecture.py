"""Lectures in the window (gui/window/lecture.py, lecture_inputs.py, lecture_screen.py):
``main.py --lecture``: Present mode steps through the lecture with the keys a presenter's clicker
sends (Page Down / Up, → / ←), each step the live model's own result with its caption; fast clicks,
problems found at run time, and the window's state saved as a lecture step."""

from __future__ import annotations

import torch
from PySide6 import QtCore, QtWidgets

from gui.state.lecture import load_lecture
from gui.state.lecture_toml import append_step
from tests.gui.lecture.test_lecture_format import TINY_LECTURE, A, B
from tests.support.gui import WORK_TIMEOUT_MS


def _wait_shown(qtbot, driver, index: int) -> None:
    qtbot.waitUntil(lambda: driver.done and driver.index == index, timeout=WORK_TIMEOUT_MS)


def _press(qtbot, widget, key) -> None:
    qtbot.keyClick(widget, key)


def test_clicker_keys_step_through_the_lecture_in_present_mode(qtbot, window, tiny_checkpoint, tmp_path):
    from gui.window.lecture import open_lecture

    path = tmp_path / "tiny.toml"
    path.write_text(TINY_LECTURE, encoding="utf-8")
    lecture = load_lecture(path)
    driver = open_lecture(window, lecture)
    _wait_shown(qtbot, driver, 0)
    pw = window.present_window
    assert pw is not None and pw.isVisible()
    keys = QtCore.Qt.Key

    def shown() -> tuple:
        vm = window.vm
        caption = driver.bar_label.text()
        return (vm.result.source.text, vm.kind, tuple(vm.selected), vm.step, pw.caption.text(), caption)

    text, kind, selected, _, present_caption, _ = shown()
    assert (text, kind, selected) == (A, "cross", (1, 2))
    assert A in present_caption
    assert "First caption." in driver.page.caption and "layer 2 / 2, head 3 / 4" in driver.page.drawn
    header, caption = [
        w.text() for w in pw.findChildren(type(pw.caption)) if "Lecture ·" in w.text() or "First caption." in w.text()
    ]
    assert "1 / 4" in header and "First caption." in caption

    _press(qtbot, pw, keys.Key_PageDown)  # what a clicker's "next" sends
    _wait_shown(qtbot, driver, 1)
    text, kind, selected, step, present_caption, bar = shown()
    assert (text, kind, selected, step) == (B, "decoder", (0, 1), 2)
    assert window.vm.teacher_forced and window.result.causal is False  # the live model's own mask-off pass
    assert "Second caption" in bar and "2 / 4" in bar and B in present_caption
    assert "causal mask OFF" in driver.page.drawn and "mean NLL" in driver.page.note
    # each reference token's probability, as the slide quotes it, against one teacher-forced pass of the
    # model without the causal mask (what this step asked for), computed here
    r, model = window.vm.result, window.worker.checkpoint.model
    ref = [st.token_id for st in r.steps]
    c = model.config
    with torch.inference_mode():
        src = torch.tensor([r.source.ids])
        enc = model.encode(src)
        logits = model.decode(torch.tensor([[c.start_id] + ref[:-1]]), enc.memory, enc.src_key_padding_mask, causal=False).logits[
            0
        ]
    probs = logits.float().softmax(-1)[torch.arange(len(ref)), torch.tensor(ref)].tolist()
    line = [x for x in driver.page.note.splitlines() if x.startswith("p(reference token) at each position: ")]
    assert len(line) == 1 and len(ref) >= 2
    assert line[0].split(": ", 1)[1].split(" · ") == [f"{st.token} {p:.2f}" for st, p in zip(r.steps, probs)]

    _press(qtbot, pw, keys.Key_Right)  # the wrong step: its problem is the caption, the lecture goes on
    _wait_shown(qtbot, driver, 2)
    assert "lecture step 3, head: 9 is out of range 1..4" in driver.bar_label.text()
    assert driver.page.error and window.vm.result.source.text == B  # nothing of the wrong step ran

    _press(qtbot, pw, keys.Key_Right)
    _wait_shown(qtbot, driver, 3)
    text, kind, selected, _, _, bar = shown()
    assert (text, kind, selected) == (B, "masks", (2, 0)) and "Fourth caption" in bar
    assert len(window.vm.state.batch) == 2 and "encoder key mask" in driver.page.drawn

    _press(qtbot, pw, keys.Key_Right)  # past the end: stays on the last step
    _wait_shown(qtbot, driver, 3)
    _press(qtbot, pw, keys.Key_PageUp)
    _wait_shown(qtbot, driver, 2)
    _press(qtbot, pw, keys.Key_Left)
    _wait_shown(qtbot, driver, 1)
    assert shown()[:3] == (B, "decoder", (0, 1))
    _press(qtbot, window, keys.Key_PageUp)  # the main window: Page Up / Down step the lecture too
    _wait_shown(qtbot, driver, 0)
    assert shown()[:3] == (A, "cross", (1, 2))
    end = window.vm.step
    _press(qtbot, pw, keys.Key_Up)  # ↓ ↑ step the decoder of the step shown
    qtbot.waitUntil(lambda: window.vm.step == end - 1, timeout=WORK_TIMEOUT_MS)
    _press(qtbot, pw, keys.Key_Down)
    qtbot.waitUntil(lambda: window.vm.step == end, timeout=WORK_TIMEOUT_MS)
    assert driver.index == 0
    driver.detach()


def test_fast_clicks_runtime_problems_and_present_mode_reopened(qtbot, window, tmp_path):
    from gui.window.lecture import open_lecture
    from gui.window.view_menu import toggle_present

    text = (
        TINY_LECTURE
        + f"""
[[steps]]
sentence = "{A}"
view = "cross"
query = 99
caption = "Fifth caption."

[[steps]]
sentence = "{A}"
view = "encoder"
layer = 2
head = 4
query = 2
caption = "Sixth caption."
"""
    )
    (tmp_path / "t.toml").write_text(text, encoding="utf-8")
    driver = open_lecture(window, load_lecture(tmp_path / "t.toml"))
    _wait_shown(qtbot, driver, 0)
    pw = window.present_window
    for _ in range(4):  # faster than the model answers: only the last step is applied
        qtbot.keyClick(pw, QtCore.Qt.Key.Key_PageDown)
    _wait_shown(qtbot, driver, 4)
    assert "lecture step 5, query: 99 is out of range 1.." in driver.page.error  # found when it ran
    assert window.vm.result.source.text == A
    qtbot.keyClick(pw, QtCore.Qt.Key.Key_Escape)  # leave Present mode, then open it again (F11)
    assert not pw.isVisible()
    toggle_present(window)
    again = window.present_window
    assert again is not pw
    qtbot.keyClick(again, QtCore.Qt.Key.Key_PageDown)
    _wait_shown(qtbot, driver, 5)
    ip = window.inside_panel
    assert (ip.step.kind, ip.step.layer, ip.step.head, ip.step.query) == ("enc", 2, 4, 2)  # the tab's own answer
    assert window.vm.kind == "encoder" and tuple(window.vm.selected) == (1, 3)
    assert "q·k/√d_k\t" in driver.page.note and ip.step.query_token in driver.page.note
    labels = [w.text() for w in again.findChildren(type(again.caption))]
    assert any("Sixth caption." in t for t in labels) and any("Lecture · 6 / 6" in t for t in labels)
    driver.detach()


def test_save_state_as_lecture_step(qtbot, window, tmp_path, monkeypatch):
    from gui.window.lecture_inputs import step_from_window
    from tests.support.gui import do

    window.inputs.text.setText(A)
    window.inputs.reference.setText("Is anyone home?")
    do(qtbot, window, window.translate)
    window.set_view("decoder")
    window.select(1, 3)
    window.controls.set_position(2)
    step = step_from_window(window)
    assert (step.sentence, step.reference, step.view, step.layer, step.head, step.decoder_step) == (
        A,
        "Is anyone home?",
        "decoder",
        2,
        4,
        2,
    )
    path = tmp_path / "saved.toml"
    append_step(path, step)
    again = load_lecture(path).steps[0]
    assert (again.sentence, again.reference, again.view, again.layer, again.head, again.decoder_step) == (
        A,
        "Is anyone home?",
        "decoder",
        2,
        4,
        2,
    )
    action = next(a for a in window.menuBar().actions()[0].menu().actions() if a.text() == "Save state as &lecture step…")
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), "*.toml"))
    action.trigger()  # the menu: appended as step 2 of the same file
    assert [s.decoder_step for s in load_lecture(path).steps] == [2, 2]
    assert "saved as step 2" in window.status.currentMessage()
