"""The registered tab panels, each built the first time it is needed.

Building the Ablate heads, Compare and Inside one step tabs (some 20 plots) took a third of a
second of the window's start, for tabs a user may never open. A panel
class that names its tabs in ``lazy_tab_titles`` gets an empty placeholder tab per title at start;
the panel itself is built when one of its tabs is first shown, or when code asks for it
(:meth:`PanelSlots.get`, e.g. ``win.analysis``). Panels without ``lazy_tab_titles`` are built at
once, as before. A late-built panel is handed to ``on_built`` (the window gives it the current
colour map and scale) and then told :meth:`gui.panels.context.Panel.catch_up` (the model already
loaded, the result already shown).
"""

from __future__ import annotations

from PySide6 import QtWidgets

from gui.panels import pair_views
from gui.panels.context import Panel, PanelContext


class PanelSlots:
    """The panels made by ``makers`` (the registry, in tab order) for ``ctx``, their tabs in
    ``tabs`` (a QTabWidget) in that order. ``on_built(panel)`` is called for every panel built
    after the start (those built at once start from the window's own style)."""

    def __init__(self, ctx: PanelContext, makers, tabs: QtWidgets.QTabWidget, on_built) -> None:
        self.ctx, self.tabs, self._on_built = ctx, tabs, on_built
        self._makers = {make.name: make for make in makers}
        self._order = list(self._makers)
        self._built: dict[str, Panel] = {}
        self._waiting: dict[str, list[QtWidgets.QWidget]] = {}  # panel name -> its placeholder tabs
        for name, make in self._makers.items():
            titles = tuple(getattr(make, "lazy_tab_titles", ()))
            if not titles:
                self._build(name)
                continue
            self._waiting[name] = []
            for title in titles:
                placeholder = QtWidgets.QWidget()
                placeholder.setObjectName(f"unbuilt tab of {name}")
                self._waiting[name].append(placeholder)
                tabs.addTab(placeholder, title)
        tabs.currentChanged.connect(self._on_current)

    def built(self) -> list[Panel]:
        """The panels built so far, in tab order (the others have nothing to export, cancel or stop)."""
        return [self._built[n] for n in self._order if n in self._built]

    def is_built(self, name: str) -> bool:
        return name in self._built

    def names(self) -> list[str]:
        return list(self._order)

    def get(self, name: str) -> Panel:
        """The panel called ``name``, built now if it was not yet. Raises KeyError if none is registered."""
        if name not in self._makers:
            raise KeyError(f"no panel {name!r}; registered: {', '.join(self._order)}")
        if name not in self._built:
            self._build(name)
        return self._built[name]

    def _on_current(self, index: int) -> None:
        widget = self.tabs.widget(index)
        for name, placeholders in list(self._waiting.items()):
            if widget in placeholders:
                self._build(name)
                return

    def _build(self, name: str) -> None:
        panel = self._makers[name](self.ctx)
        self._built[name] = panel
        placeholders = self._waiting.pop(name, None)
        if placeholders is None:  # built at start: its tabs are added in registry order
            for widget, title in panel.tabs():
                self.tabs.addTab(widget, title)
        else:
            self._replace(name, panel, placeholders)
            self._on_built(panel)
            panel.catch_up()

    def _replace(self, name: str, panel: Panel, placeholders: list[QtWidgets.QWidget]) -> None:
        """Put the panel's tabs where its placeholders are, the same tab staying current; the tab
        widget's own signals are held back (its current index does not change)."""
        tabs = panel.tabs()
        if len(tabs) != len(placeholders):
            raise RuntimeError(f"panel {name!r} has {len(tabs)} tabs but names {len(placeholders)} in lazy_tab_titles")
        current = self.tabs.currentIndex()
        blocked = self.tabs.blockSignals(True)
        try:
            for (widget, title), placeholder in zip(tabs, placeholders):
                i = self.tabs.indexOf(placeholder)
                self.tabs.removeTab(i)
                self.tabs.insertTab(i, widget, title)
                pair_views.replace_in_home_order(self.tabs, placeholder, widget)
                placeholder.deleteLater()
            self.tabs.setCurrentIndex(current)
        finally:
            self.tabs.blockSignals(blocked)
