"""What a tab panel is given, and the small interface every panel offers the window.

A panel never receives the main window: it gets a :class:`PanelContext` (the view model, the
model worker, the style, where its tabs go, the main input's request, a status line and the
selection actions) and offers :class:`Panel`'s hooks. The window builds one context and creates
every panel listed in :data:`gui.panels.registry.TAB_PANELS` with it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6 import QtCore, QtGui, QtWidgets

from gui.state.view_model import ViewModel


class Style(QtCore.QObject):
    """The look every panel shares: ``cmap`` (a pyqtgraph ColorMap for attention weights),
    ``font`` (the app's QFont; its point size follows View → Larger / Smaller font) and the
    colour ``scale`` ("fixed" [0, 1] or "per-map"). ``changed`` is emitted after any of them
    changes."""

    changed = QtCore.Signal()

    def __init__(self, cmap, font: QtGui.QFont | None = None, scale: str = "fixed") -> None:
        super().__init__()
        self.cmap, self.font, self.scale = cmap, QtGui.QFont(font) if font is not None else QtGui.QFont(), scale

    def update(self, **values) -> None:
        """Set ``cmap``, ``font`` and/or ``scale`` and emit ``changed``."""
        for name, value in values.items():
            if name not in ("cmap", "font", "scale"):
                raise TypeError(f"no style value {name!r}")
            setattr(self, name, QtGui.QFont(value) if name == "font" else value)
        self.changed.emit()


@dataclass
class PanelContext:
    """Everything a panel may use.

    ``vm``: the Qt-free :class:`ViewModel` (``vm.subscribe`` to follow it). ``worker``: the
    :class:`gui.workers.model_worker.ModelWorker` (``compute`` jobs, ``loaded`` signal, cancel by
    id). ``style``: :class:`Style`. ``tabs``: the side tab widget the panel's tabs go in (and come
    back to from their own windows); ``map_tabs``: the tabs beside the enlarged map.
    ``request()``: the main input as a :class:`gui.workers.model_worker.TranslateRequest`.
    ``set_busy(busy, queue)``: the input row's Cancel state for a job queue. ``status(text, ms)``:
    the status line. ``select(layer, head)`` (0-based) and ``select_derived(key)`` enlarge a cell
    and redraw. ``map_row_clicked``: a signal with the row (0-based) of the enlarged map the user
    clicked. ``extras``: values the window keeps for panels built late (``"map_row"``: the row
    last clicked)."""

    vm: ViewModel
    worker: QtCore.QObject
    style: Style
    tabs: QtWidgets.QTabWidget
    map_tabs: QtWidgets.QTabWidget
    request: Callable
    set_busy: Callable[[bool, str], None]
    status: Callable[[str, int], None]
    select: Callable[[int, int], None]
    select_derived: Callable[[tuple], None]
    map_row_clicked: QtCore.SignalInstance
    extras: dict = field(default_factory=dict)


class Panel:
    """The hooks a registered panel offers the window (all optional but ``tabs``).

    ``tabs()``: ``[(widget, title)]`` to add to ``ctx.tabs`` in that order. ``lazy_tab_titles``
    (class attribute, the titles ``tabs()`` will give): the panel is built only when one of its
    tabs is first shown or the window is asked for it (:mod:`gui.window.panel_slots`), and then
    ``catch_up()``: take the model already loaded (``ctx.worker.checkpoint``) and the view
    model's state, as if it had heard every change since the start. ``npz_extra()``: arrays
    for File → Export (.npz). ``set_colormap`` / ``set_scale``: View menu changes for maps the
    panel draws itself. ``cancel()``: the window's Cancel (stop the panel's jobs). ``stop()``: the
    window closes (end the panel's threads)."""

    name = ""
    lazy_tab_titles: tuple[str, ...] = ()

    def tabs(self) -> list[tuple[QtWidgets.QWidget, str]]:
        raise NotImplementedError

    def catch_up(self) -> None:
        pass

    def npz_extra(self) -> dict:
        return {}

    def set_colormap(self, cmap) -> None:
        pass

    def set_scale(self, scale: str) -> None:
        pass

    def cancel(self) -> None:
        pass

    def stop(self) -> None:
        pass
