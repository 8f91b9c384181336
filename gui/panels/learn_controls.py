"""The Learn tab's controls: the task and the model's settings a lecturer may change, the run
buttons, and what to draw. No logic beyond reading the settings (gui/panels/learn.py acts on them)."""

from __future__ import annotations

import dataclasses

from PySide6 import QtWidgets

from core.training.live_session import LiveSettings
from core.training.toy_tasks import PRESET_UPDATES
from gui.state.learn_view import KINDS

TASK_CHOICES = {  # combo text -> task name
    "copy (diagonal)": "copy",
    "reverse (anti-diagonal)": "reverse",
    "sort digits": "sort",
    "Korean numbers → digits": "numbers",
    "pairs from a file…": "file",
}


def _spin(low: int, high: int, value: int, step: int = 1, tip: str = "") -> QtWidgets.QSpinBox:
    box = QtWidgets.QSpinBox()
    box.setRange(low, high)
    box.setSingleStep(step)
    box.setValue(value)
    box.setToolTip(tip)
    return box


class LearnControls(QtWidgets.QWidget):
    """Rows: task and model settings; chunk size, last update and the run buttons; the map kind,
    "enlarge the best head" and Export. ``buttons[name]`` for Train, Pause, Resume, Step, Reset,
    Export, Detach."""

    def __init__(self, base: LiveSettings | None = None) -> None:
        super().__init__()
        base = base or LiveSettings()
        self.task = QtWidgets.QComboBox()
        for text, name in TASK_CHOICES.items():
            self.task.addItem(text, name)
        self.task.setCurrentIndex(1)  # reverse: the anti-diagonal is the most striking to watch
        self.layers = _spin(1, 6, base.layers, tip="encoder and decoder layers each")
        self.heads = _spin(1, 8, base.n_heads, tip="attention heads per layer (d_model must divide by it)")
        self.d_model = _spin(8, 256, base.d_model, 8, "model width")
        self.lr = QtWidgets.QDoubleSpinBox()
        self.lr.setDecimals(4)
        self.lr.setRange(0.0001, 0.05)
        self.lr.setSingleStep(0.0005)
        self.lr.setValue(base.peak_lr)
        self.lr.setToolTip("peak learning rate (after warm-up; then falling as 1/√step)")
        self.causal = QtWidgets.QCheckBox("causal mask")
        self.causal.setChecked(base.causal)
        self.causal.setToolTip("off: the decoder trains seeing the whole target (watch it copy instead of learn)")
        self.every = _spin(1, 1000, 50, tip="updates between evaluations (one snapshot each)")
        self.until = _spin(1, 100_000, PRESET_UPDATES["reverse"], 50, "training stops at this update")
        self.kind = QtWidgets.QComboBox()
        for key, (title, _, _) in KINDS.items():
            self.kind.addItem(title, key)
        self.follow_best = QtWidgets.QCheckBox("enlarge the best head")
        self.follow_best.setChecked(True)
        self.follow_best.setToolTip("cross-attention: enlarge the head that agrees most with the known alignment")
        self.buttons = {
            name: QtWidgets.QPushButton(text)
            for name, text in (
                ("train", "Train"),
                ("pause", "Pause"),
                ("resume", "Resume"),
                ("step", "Step"),
                ("reset", "Reset"),
                ("export", "Export frames…"),
                ("detach", "Detach ⧉"),
            )
        }
        tips = {
            "train": "a new run from update 0 with these settings, trained in chunks until the last update",
            "step": "one update, then evaluate",
            "reset": "back to update 0 with these settings (snapshots dropped)",
            "export": "the snapshots as PNG frames and an animated GIF",
        }
        for name, tip in tips.items():
            self.buttons[name].setToolTip(tip)
        for combo in (self.task, self.kind):  # the dock is narrow: a long entry is elided, never widens it
            combo.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(14)
        # short rows, so the tab fits the experiments dock at 1280 px (Detach gives the wide view)
        rows = [
            [QtWidgets.QLabel("Task"), self.task],
            [QtWidgets.QLabel("layers"), self.layers, QtWidgets.QLabel("heads"), self.heads],
            [QtWidgets.QLabel("d_model"), self.d_model, QtWidgets.QLabel("lr"), self.lr],
            [self.causal],
            [QtWidgets.QLabel("every"), self.every, QtWidgets.QLabel("until"), self.until],
            [self.buttons[n] for n in ("train", "pause", "resume")],
            [self.buttons[n] for n in ("step", "reset")],
            [self.kind],
            [self.follow_best],
            [self.buttons["export"], self.buttons["detach"]],
        ]
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        for row in rows:
            line = QtWidgets.QHBoxLayout()
            for w in row:
                line.addWidget(w)
            line.addStretch(1)
            layout.addLayout(line)
        self.task.currentIndexChanged.connect(self._preset)

    @property
    def task_name(self) -> str:
        return self.task.currentData()

    def _preset(self, _=None) -> None:
        self.until.setValue(PRESET_UPDATES.get(self.task_name, 800))

    def settings(self, base: LiveSettings) -> LiveSettings:
        """``base`` with the layers, heads, d_model, learning rate and causal mask shown."""
        return dataclasses.replace(
            base,
            layers=self.layers.value(),
            n_heads=self.heads.value(),
            d_model=self.d_model.value(),
            peak_lr=self.lr.value(),
            causal=self.causal.isChecked(),
        )

    def set_running(self, training: bool, has_run: bool) -> None:
        """Enable the buttons that make sense: Pause while training; Resume, Step and Export with a run."""
        b = self.buttons
        b["pause"].setEnabled(training)
        b["resume"].setEnabled(has_run and not training)
        b["export"].setEnabled(has_run)


__all__ = ["TASK_CHOICES", "LearnControls"]
