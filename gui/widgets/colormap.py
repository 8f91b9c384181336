"""The app's colour scale as its own small type: what panels and the window hold and pass around.

A :class:`Colormap` is a name (a colour map pyqtgraph knows: "viridis", "cividis", "CET-D1" …) or
explicit colour stops. Only the widgets turn it into the renderer's object (:func:`as_pg`, cached,
so one colour map is one pyqtgraph object and one lookup table); nothing above them imports
pyqtgraph to colour a map.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6 import QtGui

RGB = tuple[int, int, int]


@dataclass(frozen=True)
class Colormap:
    """A colour scale over ``[0, 1]``: ``name`` alone for a named map, or ``stops`` (position in
    ``[0, 1]``, RGB 0–255) for one of our own (the masks' two colours, the diverging red–blue).
    Hashable and compared by value."""

    name: str
    stops: tuple[tuple[float, RGB], ...] = ()

    @classmethod
    def named(cls, name: str) -> Colormap:
        """The named colour map. Raises ValueError when no colour map of that name exists."""
        cmap = cls(name)
        try:
            as_pg(cmap)
        except (FileNotFoundError, KeyError, ValueError) as exc:
            raise ValueError(f"unknown colour map {name!r}") from exc
        return cmap

    @classmethod
    def from_stops(cls, name: str, *stops: tuple[float, RGB]) -> Colormap:
        """A colour map through ``stops`` (positions rising from 0 to 1), named ``name``."""
        return cls(name, tuple((float(p), tuple(int(c) for c in rgb)) for p, rgb in stops))  # type: ignore[misc]

    def qcolor(self, pos: float) -> QtGui.QColor:
        """The colour at ``pos`` in ``[0, 1]``."""
        return as_pg(self).map(pos, mode=pg.ColorMap.QCOLOR)

    def lookup_table(self, n: int) -> np.ndarray:
        """``[n, 3|4]`` uint8 colours evenly spaced over ``[0, 1]`` (the renderer's table)."""
        return as_pg(self).getLookupTable(nPts=n)


@functools.lru_cache(maxsize=32)
def as_pg(cmap: Colormap) -> pg.ColorMap:
    """The pyqtgraph colour map of ``cmap``: the same object for the same colour map. Raises
    FileNotFoundError/KeyError (pyqtgraph's) for an unknown name."""
    if cmap.stops:
        return pg.ColorMap(pos=[p for p, _ in cmap.stops], color=[rgb for _, rgb in cmap.stops])
    return pg.colormap.get(cmap.name)


__all__ = ["Colormap", "as_pg"]
