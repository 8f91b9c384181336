"""The main window: composes the panels, owns the worker thread, and redraws on each step (its
widgets, menus and keyboard shortcuts are built in :mod:`gui.window.layout`)."""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from core.decoding.live import LiveState
from core.decoding.translate import Translation
from gui.panels import registry
from gui.panels.context import PanelContext, Style
from gui.state import derived as dv
from gui.state import view_kinds
from gui.state.view_model import ViewModel
from gui.state.view_spec import grid_titles
from gui.widgets.colormap import Colormap
from gui.widgets.fonts import apply_minimums, clamp_point
from gui.widgets.map_style import MASK_CMAP
from gui.widgets.pg_config import configure
from gui.window import layout as window_layout
from gui.window.facade import WindowFacade
from gui.window.layout import GRID_CAPTION, HOVER_HINT, MASKS_CAPTION
from gui.window.live import LiveController
from gui.window.panel_slots import PanelSlots
from gui.workers.model_worker import TRANSLATE, ModelWorker, TranslateRequest
from gui.workers.threads import WorkerThread

__all__ = ["MainWindow", "HOVER_HINT", "GRID_CAPTION", "MASKS_CAPTION"]  # the captions: gui/window/layout.py


class MainWindow(QtWidgets.QMainWindow, WindowFacade):
    """Attention Studio. ``request_load``/``request_translate`` reach the worker through
    queued signals; results come back as signals and are drawn on the GUI thread. The state
    (result, step, view kind, layer/head) lives in the Qt-free :class:`ViewModel` ``vm``;
    :class:`LiveController` routes the step controls and experiment panels to the worker."""

    request_load = QtCore.Signal(str, str, str)  # path, device, precision
    request_translate = QtCore.Signal(int, object)

    def __init__(self, font_family: str = "", font_size: int = 11) -> None:
        configure()  # pyqtgraph's white background etc., also when built without gui.app.main
        super().__init__()
        self.setWindowTitle("Attention Studio — Korean → English Transformer")
        self.font_family, self.font_size = font_family, font_size
        self.base_font_size = font_size  # View → Reset font size
        self.cmap = Colormap.named("viridis")
        self.vm = ViewModel()
        self.checkpoint_path: str | None = None
        self.precision = "fp32"  # View → Precision (core/checkpoints/precision.py)
        self.model_info = "no model"
        self.translate_when_loaded = False  # set by `main.py --text` to translate once the model is in
        self.step_when_translated: int | None = None  # `main.py --steps N`: go to step N once that result is in
        self.prepare_ahead = True  # lay out every view kind's grid after a load (False: one --screenshot picture)
        self._drawn: tuple | None = None  # what the grid and enlarged map currently show
        window_layout.build_widgets(self)
        self._applied_cmap = self.cmap  # what the grid and the enlarged map are built with
        window_layout.build_menus(self)
        self._start_worker()
        self.live = LiveController(self)
        window_layout.add_tabs_dock(self, self.live.tabs)
        self.outer_layout.insertWidget(1, self.live.bar)
        self.style_ = Style(self.cmap, self.font())
        self.ctx = PanelContext(
            vm=self.vm,
            worker=self.worker,
            style=self.style_,
            tabs=self.live.tabs,
            map_tabs=self.map_tabs,
            request=self.current_request,
            set_busy=self.inputs.set_busy,
            status=lambda text, ms=0: self.status.showMessage(text, ms),
            select=self.select,
            select_derived=self.select_derived,
            map_row_clicked=self.heatmap.row_clicked,
        )
        self.heatmap.row_clicked.connect(self._remember_map_row)  # for a tab built after the click
        self.slots = PanelSlots(self.ctx, registry.TAB_PANELS, self.live.tabs, self._panel_built)
        self.apply_font()

    def panel(self, name: str):
        """The registered panel called ``name`` (``Panel.name``), built now if its tab was never
        shown (:mod:`gui.window.panel_slots`). Raises KeyError if none is registered."""
        return self.slots.get(name)

    panels = property(
        lambda self: self.slots.built(), doc="the panels built so far, in tab order (one never shown has nothing to update)"
    )

    def _remember_map_row(self, row: int) -> None:
        self.ctx.extras["map_row"] = row  # 0-based row of the enlarged map last clicked

    def _panel_built(self, panel) -> None:
        """A panel built after the start takes the window's colour map and scale."""
        panel.set_colormap(self.cmap)
        if self.style_.scale != "fixed":
            panel.set_scale(self.style_.scale)

    analysis = property(lambda self: self.panel("analysis"), doc="the Ablate heads and Compare tabs")
    inside_panel = property(lambda self: self.panel("inside"), doc="the Inside one step tab")
    positional_panel = property(lambda self: self.panel("positional"), doc="the Positional encoding tab")
    heads = property(lambda self: self.panel("heads"), doc="the Heads table and the Alignment lines tabs")

    result = property(lambda self: self.vm.result, doc="the Translation shown (None before the first)")
    kind = property(lambda self: self.vm.kind, doc="the view: encoder, decoder, cross or masks")
    selected = property(lambda self: self.vm.selected, doc="(layer, head) enlarged, or (mask index, 0); select() changes it")

    # ---------- worker thread ----------
    def _start_worker(self) -> None:
        self.worker = ModelWorker()
        self.thread = WorkerThread(self.worker, self)
        self.request_load.connect(self.worker.load)
        self.request_translate.connect(self.worker.translate)
        self.worker.loaded.connect(self._on_loaded)
        self.worker.load_failed.connect(self._on_load_failed)
        self.worker.load_progress.connect(self._on_load_progress)
        self.worker.translated.connect(self._on_translated)
        self.worker.failed.connect(self._on_failed)
        self.worker.cancelled.connect(self._on_cancelled)  # a bound slot: runs on the GUI thread
        self.worker.busy.connect(self.inputs.set_busy)
        self.thread.start()

    # ---------- model and translation ----------
    def load_checkpoint(self, path: str, device: str = "auto", precision: str | None = None) -> None:
        """Load ``path`` in the worker thread on ``device`` at ``precision`` (default: the one
        chosen in View → Precision, "fp32" unless changed)."""
        self.precision = precision or self.precision
        self.status.showMessage(f"loading {Path(path).name} ({self.precision}) …")
        self.load_bar.setValue(0)
        self.load_bar.setVisible(True)
        self.request_load.emit(str(path), device, self.precision)

    def set_precision(self, precision: str) -> None:
        """View → Precision: load the current model again at ``precision``; if that fails the
        model loaded before stays."""
        if self.checkpoint_path:
            self.load_checkpoint(self.checkpoint_path, self.worker.checkpoint.device.type, precision)
        else:
            self.precision = precision

    def open_checkpoint_dialog(self) -> None:
        path = QtWidgets.QFileDialog.getExistingDirectory(self, "Open checkpoint directory")
        if path:
            self.load_checkpoint(path, "cpu" if self.inputs.device.currentIndex() == 0 else "cuda")

    def on_device_changed(self, device: str) -> None:
        if self.checkpoint_path:
            self.load_checkpoint(self.checkpoint_path, device)

    def _on_load_progress(self, message: str, fraction: float) -> None:
        """Loading runs in the worker thread; this only updates the status bar (window stays live)."""
        self.load_bar.setValue(int(round(100 * fraction)))
        self.status.showMessage(f"loading checkpoint: {message} …")

    def use_checkpoint(self, ckpt) -> None:
        """Make ``ckpt`` (loaded by the caller on this thread, e.g. for ``--screenshot``) the app's
        model, as if the worker had loaded it: every follower of ``worker.loaded`` hears of it."""
        self.worker.checkpoint = ckpt
        self.worker.loaded.emit(ckpt)

    def _on_loaded(self, ckpt) -> None:
        self.load_bar.setVisible(False)
        self.checkpoint_path = str(ckpt.path)
        c = ckpt.config
        self.model_info = (
            f"model {ckpt.name}: {c.n_encoder_layers}+{c.n_decoder_layers} layers × {c.n_heads} heads, "
            f"d_model {c.d_model} on {ckpt.device.type.upper()}"
        )
        self.precision = ckpt.precision
        if ckpt.precision != "fp32":
            self.model_info += f", {ckpt.precision} (maps are what this precision computed)"
        for name, action in getattr(self, "precision_actions", {}).items():
            action.setChecked(name == ckpt.precision)
        self.inputs.device.blockSignals(True)
        self.inputs.device.setCurrentIndex(0 if ckpt.device.type == "cpu" else 1)
        self.inputs.device.blockSignals(False)
        self.status.showMessage(self.model_info)
        if self.prepare_ahead:  # the view shown first: its grid is the placeholder until a result comes
            kinds = tuple(sorted(view_kinds.names(), key=lambda kind: kind != self.kind))
            QtCore.QTimer.singleShot(0, self, lambda c=c: self.prepare_grids(c, kinds))  # after this slot: the window stays live
        if self.translate_when_loaded and self.inputs.text.text().strip():
            self.translate_when_loaded = False
            self.translate()

    @property
    def request_id(self) -> int:
        """The newest job of the "translate" queue (translations and live commands)."""
        return self.worker.jobs.latest(TRANSLATE)

    def prepare_grids(self, config, kinds: tuple | None = None) -> None:
        """Lay out the grid of each view in ``kinds`` for a model of ``config``'s shape ahead of
        its first result (building a 6 × 8 grid takes hundreds of ms; filling it, a few): one
        layout per event-loop turn, and none while a translation is being computed (the GUI
        thread stays free for it; a result lays out what it needs itself). ``kinds``: view names
        (default: every view)."""
        kinds = view_kinds.names() if kinds is None else kinds
        if (
            not kinds
            or self.live.pending is not None
            or self.worker.checkpoint is None
            or self.worker.checkpoint.config is not config
        ):
            return
        kind = kinds[0]
        n_layers = view_kinds.get(kind).n_layers(config)
        self.grid.prepare(*grid_titles(kind, n_layers, config.n_heads), show=self.result is None and kind == self.kind)
        QtCore.QTimer.singleShot(0, self, lambda: self.prepare_grids(config, kinds[1:]))

    def _on_cancelled(self, request_id: int) -> None:
        note = self.live.request_dropped(request_id, cancelled=True)  # settings back to the result on screen
        if request_id == self.request_id:  # Cancel drops the queued move too: the result on screen stays
            self.controls.queued = None
            self.controls.release()
            self.set_computing(False)
        if request_id != self.request_id:
            return  # superseded by a newer request: its own status stays
        self.status.showMessage(*(note or ("translation cancelled; the last result stays on screen", 5000)))

    def _on_load_failed(self, reason: str) -> None:
        self.load_bar.setVisible(False)
        ck = self.worker.checkpoint
        self.inputs.device.blockSignals(True)  # the selector shows where the model really is
        self.inputs.device.setCurrentIndex(0 if ck is None or ck.device.type == "cpu" else 1)
        self.inputs.device.blockSignals(False)
        self.status.showMessage(f"could not open checkpoint; still using {self.model_info}")
        QtWidgets.QMessageBox.critical(self, "Could not open checkpoint", f"{reason}\n\nThe previous model stays loaded.")

    def current_request(self) -> TranslateRequest:
        ref = self.inputs.reference.text().strip() or None
        pad = self.inputs.pad_to.value() or None
        return TranslateRequest(
            self.inputs.text.text(),
            self.inputs.strategy(),
            pad,
            ref,
            batch_with=self.live.bar.batch_with.text().strip() or None,
            show_full=self.vm.show_full,
            causal=self.live.causal,
        )

    def translate(self) -> int:
        job = self.worker.jobs.start(TRANSLATE)  # supersedes older requests, running or waiting
        req = self.current_request()
        self.live.request_sent(job, req)  # the step controls wait for its answer
        self.status.showMessage("translating …")
        self.request_translate.emit(job, req)
        return job

    def cancel(self) -> None:
        self.worker.jobs.cancel(TRANSLATE)  # the running request and any still waiting
        for panel in self.panels:  # and an ablation or comparison, running or waiting
            panel.cancel()

    def set_computing(self, on: bool) -> None:
        """Mark the enlarged map (here and in Present mode) as being recomputed, or not."""
        self.heatmap.set_computing(on)
        present = getattr(self, "present_window", None)
        if present is not None:
            present.heatmap.set_computing(on)

    def _on_translated(self, request_id: int, state, ms: float) -> None:
        if request_id != self.request_id:
            self.live.request_dropped(request_id, cancelled=False)
            return  # a newer request superseded this one
        self.live.request_answered(request_id)  # (before drawing: the controls are released)
        self.show_result(state)
        self.set_computing(False)
        self.controls.release()  # drawn: a move queued meanwhile (or Play's next step) goes on
        if self.step_when_translated is not None:  # `--steps N` given with --text: show step N
            step, self.step_when_translated = self.step_when_translated, None
            self.live.on_position(max(0, step))
        self.inputs.auto_translate = True  # from now on pad / beam / decoding changes re-translate
        result = self.vm.result
        note = f" — {result.notice}" if result.notice else ""
        self.status.showMessage(f"{self.model_info} · {result.mode} · {ms:.0f} ms{note}")
        self.controls.slider.setFocus()

    def _on_failed(self, request_id: int, reason: str) -> None:
        self.live.request_dropped(request_id, cancelled=False)  # the inputs stay: they are what to fix
        if request_id == self.request_id:
            self.controls.queued = None  # the move waited for a step that failed: nothing to go on with
            self.controls.release()
            self.set_computing(False)  # the last good result stays, undimmed
        self.status.showMessage(f"⚠ {reason} (the last result stays on screen)")
        if request_id == self.request_id and self.result is None:
            self.translation_label.setText(f"⚠ {reason}")

    def show_result(self, state: LiveState | Translation, position: int | None = None) -> None:
        """Show a worker state (live: at its own step) or a complete result (at ``position``,
        default the end)."""
        self.vm.set_state(state, position)
        self.live.sync()
        self.redraw()

    # ---------- drawing ----------
    def set_view(self, kind: str) -> None:
        """Show view ``kind`` (a name in :mod:`gui.state.view_kinds`). Raises ValueError for another."""
        view = view_kinds.get(kind)
        self.vm.set_kind(kind)
        self.view_selector.blockSignals(True)
        self.view_selector.setCurrentIndex(view_kinds.names().index(kind))
        self.view_selector.blockSignals(False)
        ck = self.worker.checkpoint
        if self.result is None and ck is not None:  # no result yet: the placeholder takes this view's shape
            n_layers = view.n_layers(ck.config)
            self.grid.prepare(*grid_titles(kind, n_layers, ck.config.n_heads), show=True)
        self.redraw()

    def select(self, layer: int, head: int) -> None:
        """Enlarge head (layer, head), 0-based (in the Masks view: mask ``layer``)."""
        self.vm.select(layer, head)
        self.redraw()

    def select_derived(self, key: tuple) -> None:
        """Enlarge a derived cell: ``("mean", layer)`` or ``("rollout", 0)``."""
        self.vm.select_derived(key)
        self.redraw()

    def cell_clicked(self, key) -> None:
        """A grid click: a head, a mask, or a derived cell (mean over heads, rollout)."""
        if dv.is_derived(key):
            self.select_derived(key)
        else:
            self.select(*key)

    def redraw(self, force: bool = False) -> None:
        """Draw the view model's state (``force``: also maps that look unchanged, after a style change)."""
        if force:
            self._drawn = None
        r = self.result
        if r is None:
            return
        k = self.vm.step
        self.live.update_panels()
        self.translation_label.setText(self.vm.translation_html())
        self.step_label.setText(self.vm.step_description())
        self.topk.set_candidates(*self.vm.candidates())
        frame = self.vm.frame()  # what is drawn, built once per change: gui/state/view_spec.py
        self.masks.set_masks(frame.step.masks, r.maps.src_tokens, r.maps.tgt_tokens[:k])
        masks = view_kinds.get(self.kind).is_masks
        self._apply_colormap(MASK_CMAP if masks else self.cmap)
        self.grid_caption.setText(MASKS_CAPTION if masks else GRID_CAPTION)
        # the same picture (e.g. encoder maps while the decoder steps) is not drawn again
        if self._drawn is not None and self._drawn[1] == id(self.cmap) and frame.same_picture(self._drawn[0]):
            return
        self._drawn = (frame, id(self.cmap))
        grid, spec = frame.grid, frame.enlarged
        self.grid.selected = grid.selected
        self.grid.set_cells(grid.cells, grid.n_cols)
        if spec.mask_picture:
            self.heatmap.set_mask_matrix(spec.matrix, spec.row_tokens, spec.col_tokens, spec.title)
        else:
            self.heatmap.set_matrix(
                spec.matrix, spec.mask, spec.row_tokens, spec.col_tokens, spec.title, spec.row_label, spec.col_label
            )

    # ---------- presenter comfort and export ----------
    def apply_font(self) -> None:
        font = QtGui.QFont(self.font_family, self.font_size) if self.font_family else QtGui.QFont()
        font.setPointSize(self.font_size)
        QtWidgets.QApplication.instance().setFont(font)
        self.setFont(font)
        big = QtGui.QFont(font)
        big.setPointSize(self.font_size + 4)
        self.translation_label.setFont(big)
        for w in (self.heatmap, self.topk, self.masks):
            w.set_font(font)
        self.grid.set_font(font)
        apply_minimums({"heatmap": self.heatmap, "grid": self.grid, "topk": self.topk, "masks": self.masks}, font, self.split)
        self._drawn = None
        self.redraw()
        self.style_.update(font=font)

    def reset_font(self) -> None:
        """Back to the size the window was opened with (``--font-size``)."""
        self.font_size = self.base_font_size
        self.apply_font()

    def change_font(self, delta: int) -> None:
        self.font_size = clamp_point(self.font_size + delta)
        self.apply_font()

    def set_colormap(self, name: str) -> None:
        self.cmap = Colormap.named(name)
        self._drawn = None
        self.redraw()
        self.style_.update(cmap=self.cmap)
        for panel in self.panels:  # maps the panels draw themselves (Ablate heads / Compare)
            panel.set_colormap(self.cmap)
        if self.present_window is not None:
            self.present_window.refresh()
        if not view_kinds.get(self.kind).is_masks:
            self._apply_colormap(self.cmap)

    def _apply_colormap(self, cmap: Colormap) -> None:
        """Give the grid and the enlarged map ``cmap`` unless they have it (they are built with
        the window's colour map: the first result does not recolour every thumbnail again)."""
        if self._applied_cmap is cmap:
            return
        self._applied_cmap = cmap
        self.heatmap.set_colormap(cmap)
        self.grid.set_colormap(cmap)

    def showEvent(self, event) -> None:
        """The first time the window is shown: fit the docks to its size."""
        super().showEvent(event)
        if not getattr(self, "docks_arranged", False):
            self.docks_arranged = True
            window_layout.arrange_docks(self, self.width(), self.height())

    def closeEvent(self, event) -> None:
        self.worker.shutdown()  # drops queued requests and loads; a running search stops at its next step
        self.thread.stop()  # only a checkpoint load already running cannot be interrupted
        for panel in self.panels:  # e.g. the Ablate heads / Compare thread (its runs were dropped above)
            panel.stop()
        super().closeEvent(event)
