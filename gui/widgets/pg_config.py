"""pyqtgraph's global options for every Attention Studio widget: white background, black text,
row-major images (``image[row, col]`` = ``[query, key]``), anti-aliased lines.

Called by :class:`gui.window.main_window.MainWindow` and :class:`gui.widgets.heatmap.Heatmap` before they build
their views, so scripts and tests that build them without ``gui.app.main`` draw the same as the
app (pyqtgraph's own defaults are a black background with grey text)."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtWidgets

OPTIONS = dict(imageAxisOrder="row-major", background="w", foreground="k", antialias=True)


def configure() -> None:
    """Set :data:`OPTIONS` with ``pg.setConfigOptions``; idempotent (the same options on every
    call). Affects widgets built afterwards: a view reads its background when it is created."""
    pg.setConfigOptions(**OPTIONS)


def no_background_cache(view: QtWidgets.QGraphicsView) -> None:
    """Paint ``view``'s plain background directly instead of from a cached pixmap (pyqtgraph's
    default): the cache is blitted over the whole exposed area at every paint, through Qt's GUI
    thread pool, which cost more than filling it. For the views redrawn at every decoder step."""
    view.setCacheMode(QtWidgets.QGraphicsView.CacheModeFlag.CacheNone)
