"""Input row (text, reference, padding demo, decoding, device) and step controls."""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from core.decoding.strategy import DecodingStrategy
from core.defaults import MAX_BEAM
from core.device import cuda_unavailable_reason
from gui.widgets.fence import fenced

DECODINGS = ["Greedy", "Beam", "Sampling"]  # the decoding selector's entries, in order
BUSY_NAMES = {"translate": "the translation", "ablate": "the ablation", "compare": "the comparison"}


class InputPanel(QtWidgets.QWidget):
    """Korean input (Enter translates), reference, pad-to, greedy/beam, device. Signals:
    ``translate_requested()`` (Enter, the button, or — once ``auto_translate`` is set — a change
    of pad-to, beam k or decoding), ``cancel_requested()``, ``device_changed(str)``."""

    translate_requested = QtCore.Signal()
    cancel_requested = QtCore.Signal()
    device_changed = QtCore.Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        grid = QtWidgets.QGridLayout(self)
        grid.setContentsMargins(4, 4, 4, 4)
        self.text = QtWidgets.QLineEdit()
        self.text.setPlaceholderText("한국어 문장을 입력하세요 — type Korean and press Enter")
        self.text.setAttribute(QtCore.Qt.WidgetAttribute.WA_InputMethodEnabled, True)
        self.text.returnPressed.connect(self.translate_requested)
        self.translate_button = QtWidgets.QPushButton("Translate")
        self.translate_button.clicked.connect(self.translate_requested)
        self._busy: dict[str, bool] = {}  # set_busy: per queue
        self.cancel_button = QtWidgets.QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel_requested)
        grid.addWidget(QtWidgets.QLabel("Korean:"), 0, 0)
        grid.addWidget(self.text, 0, 1, 1, 7)
        grid.addWidget(self.translate_button, 0, 8)
        grid.addWidget(self.cancel_button, 0, 9)

        self.reference = QtWidgets.QLineEdit()
        self.reference.setPlaceholderText("optional English reference → teacher-forced training view")
        self.reference.returnPressed.connect(self.translate_requested)
        self.pad_to = QtWidgets.QSpinBox()
        self.pad_to.setRange(0, 256)
        self.pad_to.setSpecialValueText("off")
        self.pad_to.setToolTip("Pad the source with [PAD] up to N positions (padding demo)")
        self.decoding = QtWidgets.QComboBox()
        self.decoding.addItems(DECODINGS)
        self.beam = QtWidgets.QSpinBox()
        self.beam.setRange(2, MAX_BEAM)
        self.beam.setValue(4)
        self.beam.setPrefix("k = ")
        self.beam.setEnabled(False)
        # sampling: a temperature slider (0 … 2 in steps of 0.05; 0 = greedy) and the seed
        self.temperature = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
        self.temperature.setRange(0, 40)
        self.temperature.setValue(20)
        self.temperature.setToolTip(
            "sampling temperature T: the logits are divided by T before the softmax "
            "(0 = always the most probable token, as greedy)"
        )
        self.temperature_label = QtWidgets.QLabel("T = 1.00")
        self.temperature.valueChanged.connect(lambda v: self.temperature_label.setText(f"T = {v / 20:.2f}"))
        self.seed = QtWidgets.QSpinBox()
        self.seed.setRange(0, 99999)
        self.seed.setPrefix("seed ")
        self.seed.setToolTip("the random seed of the draw: the same seed gives the same output")
        self._enable_decoding_settings(0)
        self.decoding.currentIndexChanged.connect(self._enable_decoding_settings)
        self.device = QtWidgets.QComboBox()
        self.device.addItems(["CPU", "GPU"])
        reason = cuda_unavailable_reason()
        if reason:
            item = self.device.model().item(1)
            item.setEnabled(False)
            item.setToolTip(f"GPU unavailable: {reason}")
            self.device.setToolTip(f"GPU unavailable: {reason}")
        self.device.currentIndexChanged.connect(lambda i: self.device_changed.emit("cpu" if i == 0 else "cuda"))
        grid.addWidget(QtWidgets.QLabel("Reference:"), 1, 0)
        grid.addWidget(self.reference, 1, 1)
        grid.addWidget(QtWidgets.QLabel("Pad source to N:"), 1, 2)
        grid.addWidget(self.pad_to, 1, 3)
        grid.addWidget(QtWidgets.QLabel("Decoding:"), 1, 4)
        grid.addWidget(self.decoding, 1, 5)
        sampling = QtWidgets.QHBoxLayout()
        sampling.setContentsMargins(0, 0, 0, 0)
        for w in (self.beam, self.temperature, self.temperature_label, self.seed):
            sampling.addWidget(w)
        grid.addLayout(sampling, 1, 6)
        grid.addWidget(QtWidgets.QLabel("Device:"), 1, 7)
        grid.addWidget(self.device, 1, 8, 1, 2)
        grid.setColumnStretch(1, 1)
        self.auto_translate = False  # set once a result is shown: then a settings change re-translates
        self.pad_to.valueChanged.connect(self._settings_changed)
        self.beam.valueChanged.connect(self._settings_changed)
        self.decoding.currentIndexChanged.connect(self._settings_changed)
        self.temperature.valueChanged.connect(self._settings_changed)
        self.seed.valueChanged.connect(self._settings_changed)

    def _enable_decoding_settings(self, i: int) -> None:
        """Only the chosen decoding's settings are shown: k for beam, T and the seed for sampling."""
        self.beam.setVisible(DECODINGS[i] != "Sampling")
        self.beam.setEnabled(DECODINGS[i] == "Beam")
        for w in (self.temperature, self.temperature_label, self.seed):
            w.setVisible(DECODINGS[i] == "Sampling")

    def _settings_changed(self, *_) -> None:
        """Pad-to, beam k or greedy/beam changed: translate again (the shown maps would be stale)."""
        if self.auto_translate and self.text.text().strip():
            self.translate_requested.emit()

    def strategy(self) -> DecodingStrategy:
        """The decoding chosen: greedy, beam of k, or sampling at the slider's temperature and seed."""
        name = DECODINGS[self.decoding.currentIndex()]
        if name == "Beam":
            return DecodingStrategy.beam(self.beam.value())
        if name == "Sampling":
            return DecodingStrategy.sampling(self.temperature.value() / 20, seed=self.seed.value())
        return DecodingStrategy.greedy()

    def set_strategy(self, strategy: DecodingStrategy) -> None:
        """Show ``strategy`` in the decoding widgets (the caller holds off re-translation)."""
        if strategy.is_beam:
            self.beam.setValue(strategy.beam_size)
        if strategy.is_sampling:
            self.temperature.setValue(round(strategy.temperature * 20))
            self.seed.setValue(strategy.seed)
        self.decoding.setCurrentIndex(
            DECODINGS.index("Beam" if strategy.is_beam else "Sampling" if strategy.is_sampling else "Greedy")
        )

    def beam_size(self) -> int:
        """The chosen strategy's beam size (1 for greedy and sampling)."""
        return self.strategy().beam_size

    def set_busy(self, busy: bool, queue: str = "translate") -> None:
        """Busy state per queue: "translate" (translations, live steps and loads on the model
        worker) disables Translate; "ablate" and "compare" (the analysis tabs, on their own
        thread) do not. Cancel is enabled while any queue is busy; tooltips say which."""
        self._busy[queue] = busy
        running = [q for q, on in self._busy.items() if on]
        self.cancel_button.setEnabled(bool(running))
        self.cancel_button.setToolTip(f"stop: {', '.join(BUSY_NAMES.get(q, q) for q in running)}" if running else "")
        translating = self._busy.get("translate", False)
        self.translate_button.setEnabled(not translating)
        self.translate_button.setToolTip("a translation or model load is running: Cancel stops it" if translating else "")


END = "end"  # a queued move to the last step of whatever result is then on screen


class StepControls(QtWidgets.QWidget):
    """Reset, Back, Step, Play/Pause (with speed), Run to end, and a slider. Emits
    ``position_changed(int)`` whenever the shown step changes.

    Nothing a click asks for is silently dropped, and the slider never runs ahead of the map:
    while ``held`` (:meth:`set_held`: a new result is being computed, there is nothing to step
    through yet) the buttons and the slider are disabled (visibly) and keys emit ``refused()``;
    while ``awaiting`` (:meth:`await_draw`: a step asked for is being computed) a move is queued
    (:attr:`queued`; relative moves count from it, so four Back clicks go back four steps) and
    made once the window has drawn what it waited for (:meth:`release`); the label says where it
    goes. Play advances only after the previous step is drawn."""

    position_changed = QtCore.Signal(int)
    refused = QtCore.Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        row = QtWidgets.QHBoxLayout(self)
        row.setContentsMargins(4, 0, 4, 0)
        self.reset_button = QtWidgets.QPushButton("|◀ Reset")
        self.back_button = QtWidgets.QPushButton("◀ Back")
        self.step_button = QtWidgets.QPushButton("Step ▶")
        self.play_button = QtWidgets.QPushButton("Play")
        self.end_button = QtWidgets.QPushButton("Run to end ▶|")
        self.speed = QtWidgets.QDoubleSpinBox()
        self.speed.setRange(0.25, 20.0)
        self.speed.setValue(2.0)
        self.speed.setSuffix(" steps/s")
        self.slider = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
        self.slider.setRange(0, 0)
        self.label = QtWidgets.QLabel("step 0 / 0")
        for w in (self.reset_button, self.back_button, self.step_button, self.play_button, self.speed, self.end_button):
            row.addWidget(w)
        row.addWidget(self.slider, 1)
        row.addWidget(fenced(self.label))  # "step k / n" changes at every step: no re-layout unless its size does
        self.held = False
        self.awaiting = False
        self.queued: int | str | None = None  # a move asked for while held or awaiting (END: the last step)
        self.timer = QtCore.QTimer(self)
        self.timer.timeout.connect(self._tick)
        self.reset_button.clicked.connect(lambda: self.set_position(0))
        self.back_button.clicked.connect(lambda: self.set_position(self.target - 1))
        self.step_button.clicked.connect(lambda: self.set_position(self.target + 1))
        self.end_button.clicked.connect(lambda: self.set_position(END))
        self.play_button.clicked.connect(self.toggle_play)
        self.speed.valueChanged.connect(lambda v: self.timer.setInterval(int(1000 / v)))
        self.slider.valueChanged.connect(self._on_slider)

    @property
    def position(self) -> int:
        return self.slider.value()

    def set_steps(self, n: int, position: int) -> None:
        self.stop()
        self.slider.blockSignals(True)
        self.slider.setRange(0, n)
        self.slider.setValue(position)
        self.slider.blockSignals(False)
        self._on_slider(self.slider.value())

    @property
    def target(self) -> int:
        """Where the next relative move counts from: the queued step, else the slider's."""
        if self.queued == END:
            return self.slider.maximum()
        return self.position if self.queued is None else int(self.queued)

    def set_held(self, held: bool) -> None:
        """Hold (True) while a new result is computed: Play stops and the buttons and the slider
        are disabled until the release (False)."""
        self.held = bool(held)
        for w in (self.reset_button, self.back_button, self.step_button, self.play_button, self.end_button, self.slider):
            w.setEnabled(not self.held)
        if self.held:
            self.stop()
            self.queued = None  # a move asked of the result being replaced has nothing to go to
        else:
            self._flush()

    def await_draw(self) -> None:
        """A step was asked of the worker: until :meth:`release`, moves queue and Play waits."""
        self.awaiting = True

    def release(self) -> None:
        """The window drew the answer it waited for: make the queued move, if any."""
        self.awaiting = False
        self._flush()

    def _flush(self) -> None:
        if self.held or self.awaiting or self.queued is None:
            return
        k, self.queued = self.queued, None
        self.set_position(k)

    def set_position(self, k: int | str) -> None:
        """Go to step ``k`` (or ``END``), now or, while awaiting a step, once it is drawn; refused
        (``refused()``) while held."""
        if self.held:
            self.refused.emit()
            return
        if self.awaiting:
            self.queued = k if k == END else max(0, int(k))
            where = "the end" if k == END else f"step {self.queued}"
            self.label.setText(f"step {self.position} → {where} (queued)")
            return
        k = self.slider.maximum() if k == END else k
        self.slider.setValue(max(0, min(k, self.slider.maximum())))

    def _on_slider(self, k: int) -> None:
        self.label.setText(f"step {k} / {self.slider.maximum()}")
        self.position_changed.emit(k)

    def toggle_play(self) -> None:
        if self.timer.isActive():
            self.stop()
            return
        if self.held:
            self.refused.emit()
            return
        if self.position >= self.slider.maximum():
            self.set_position(0)
        self.timer.start(int(1000 / self.speed.value()))
        self.play_button.setText("Pause")

    def stop(self) -> None:
        self.timer.stop()
        self.play_button.setText("Play")

    def _tick(self) -> None:
        if self.awaiting or self.held:  # the step shown is not drawn yet: Play waits for it
            return
        if self.position >= self.slider.maximum():
            self.stop()
        else:
            self.set_position(self.position + 1)
