"""The window's inputs and a lecture step: fill the inputs and select the view a step asks for, and the
reverse, the window's state as a step (File → Save state as lecture step…, appended to a file by
:mod:`gui.state.lecture_toml`)."""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtWidgets

from core.decoding.strategy import DecodingStrategy
from gui.state import view_kinds
from gui.state.lecture import LectureError, LectureStep
from gui.state.lecture_toml import append_step


def fill_inputs(win, step: LectureStep) -> None:
    """Put ``step``'s sentence and switches into the window's inputs (nothing runs: the inputs'
    own re-translation on a settings change is held off while they are filled)."""
    inputs = win.inputs
    auto, inputs.auto_translate = inputs.auto_translate, False
    try:
        inputs.text.setText(step.sentence)
        inputs.reference.setText(step.reference or "")
        inputs.pad_to.setValue(step.pad_to or 0)
        win.live.bar.batch_with.setText(step.batch_with or "")
        win.live.reference.causal_off.setChecked(not step.causal_mask)
        inputs.set_strategy(DecodingStrategy.from_beam_size(step.beam))
    finally:
        inputs.auto_translate = auto


def select_view(win, step: LectureStep) -> None:
    """Show ``step``'s view and enlarge its head (or its mask in the Masks view)."""
    win.set_view(step.view)
    if view_kinds.get(step.view).is_masks:
        win.select(step.mask - 1, 0)
    else:
        win.select(step.layer - 1, step.head - 1)


def step_from_window(win) -> LectureStep:
    """The window's state as a lecture step: sentence, switches, view, head, the decoder step
    (none at the end), a forced token, the ablation or query of the tab shown. Raises ValueError
    before a translation is shown."""
    vm = win.vm
    if vm.result is None:
        raise ValueError("nothing to save yet: translate a sentence first")
    step = LectureStep(0, sentence=win.inputs.text.text().strip())
    step.reference = win.inputs.reference.text().strip() or None
    step.causal_mask = win.live.causal or step.reference is None
    step.batch_with = win.live.bar.batch_with.text().strip() or None
    step.pad_to = win.inputs.pad_to.value() or None
    if win.inputs.strategy().is_sampling:
        raise ValueError("a lecture step holds greedy or beam decoding: switch Decoding to Greedy or Beam to save it")
    step.beam = win.inputs.beam_size()
    step.decoding = "greedy" if step.beam == 1 else "beam"
    step.view = vm.kind
    if view_kinds.get(vm.kind).is_masks:
        step.mask = vm.selected[0] + 1
    else:
        step.layer, step.head = vm.selected[0] + 1, vm.selected[1] + 1
    at_end = vm.state.finished and vm.step >= len(vm.result.steps)
    step.decoder_step = None if at_end else vm.step
    st = vm.state
    if st.fork_point is not None and st.fork_point <= len(vm.result.steps):
        step.force = vm.result.steps[st.fork_point - 1].token.replace("▁", " ").strip() or None
        step.force_at = st.fork_point if step.force else None
    current = win.live.tabs.currentWidget()
    ablation = win.analysis.ablation if win.slots.is_built("analysis") else None  # never shown: nothing ablated
    if ablation is not None and current is ablation and ablation.report is not None:
        r = ablation.report.result
        step.ablate = ",".join(f"{la}:{h}" for la, h in r.heads)
        step.ablate_kind = r.kind
    if win.slots.is_built("inside") and current is win.inside_panel and win.inside_panel.step is not None:
        step.query = win.inside_panel.query.value()
    return step


def save_state_dialog(win) -> Path | None:
    """File → Save state as lecture step…: append the window's state to a lecture file (a new
    file starts with a title); the status bar says which step it became. Returns the path."""
    from gui.export.files import start_dir

    try:
        step = step_from_window(win)
    except ValueError as exc:
        win.status.showMessage(str(exc), 5000)
        return None
    path, _ = QtWidgets.QFileDialog.getSaveFileName(
        win,
        "Save state as lecture step (appended to the file)",
        str(start_dir() / "lecture.toml"),
        "Lecture (*.toml)",
        options=QtWidgets.QFileDialog.Option.DontConfirmOverwrite,
    )
    if not path:
        return None
    try:
        number = append_step(path, step)
    except LectureError as exc:
        QtWidgets.QMessageBox.warning(win, "Could not save the lecture step", str(exc))
        return None
    win.status.showMessage(f"saved as step {number} of {path}: write its caption there", 8000)
    return Path(path)


__all__ = ["fill_inputs", "save_state_dialog", "select_view", "step_from_window"]
