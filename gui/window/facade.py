"""The window as the command line, scripts and bench drive it: one public method for each thing
they do, so none of them reaches into the window's children (``win.live.reference.causal_off``)
or calls its private slots. MainWindow inherits these; everything here is one line of routing."""

from __future__ import annotations

from collections.abc import Callable

from core.decoding.strategy import DecodingStrategy

LIVE_TABS = ("fork", "reference", "beam", "heads")  # --panel names of the tabs under the map


class WindowFacade:
    """Mixed into :class:`gui.window.main_window.MainWindow` (whose children these methods use)."""

    def fill_inputs(
        self,
        text: str,
        reference: str = "",
        pad_to: int = 0,
        batch_with: str = "",
        causal_off: bool = False,
        strategy: DecodingStrategy | None = None,
    ) -> None:
        """Put a request in the input boxes as a user would type it (nothing is translated yet):
        the Korean ``text``, a teacher-forcing ``reference``, padding to ``pad_to`` tokens (0 = off),
        a second sentence to ``batch_with``, the causal mask switched off, the decoding ``strategy``."""
        self.inputs.text.setText(text)
        self.inputs.reference.setText(reference)
        self.inputs.pad_to.setValue(pad_to)
        self.live.bar.batch_with.setText(batch_with)
        self.live.reference.causal_off.setChecked(causal_off)
        if strategy is not None:
            self.inputs.set_strategy(strategy)

    def set_input_text(self, text: str) -> None:
        """The Korean input box's text (as typed; not translated yet)."""
        self.inputs.text.setText(text)

    def show_live_tab(self, name: str) -> None:
        """Bring tab ``name`` (one of :data:`LIVE_TABS`) to the front.

        Raises:
            ValueError: an unknown name."""
        if name not in LIVE_TABS:
            raise ValueError(f"unknown tab {name!r}; expected one of {', '.join(LIVE_TABS)}")
        tabs = self.live.tabs
        tabs.setCurrentIndex(tabs.indexOf(self.heads.table_panel) if name == "heads" else LIVE_TABS.index(name))

    def show_alignment(self) -> None:
        """The Alignment lines tab beside the enlarged map instead of the heatmap."""
        self.heads.map_tabs.setCurrentWidget(self.heads.align)

    def go_to_step(self, k: int) -> None:
        """Show decoder step ``k`` (0-based) of the current result, as the step slider does."""
        self.controls.set_position(k)

    def set_projector_layout(self, on: bool) -> None:
        """The projector layout on or off (View → Projector layout, F9)."""
        self.projector.set(on)

    def panel_named(self, name: str):
        """The panel (tab) registered as ``name`` (gui.panels.registry), built if it was not yet."""
        return self.slots.get(name)

    def intercept_results(self, probe: Callable[[int, object, float], None]) -> Callable[[int, object, float], None]:
        """Route the worker's translation results to ``probe`` instead of the window, and return the
        window's own result slot for ``probe`` to call (a benchmark timing the GUI thread's work)."""
        self.worker.translated.disconnect(self._on_translated)
        self.worker.translated.connect(probe)
        return self._on_translated
