"""The app's views, one :class:`ViewKind` each, in one registry (no Qt, no torch).

A view is what the layer × head grid and the enlarged map show: the encoder self-attention, the
decoder (masked) self-attention, the cross-attention, or the masks the model was given. Every
place that lists, names or cuts views reads this registry: the view selector, ``--view``, lecture
files, the grid and its derived cells, the exports, the head tools. Adding a view is one entry
in :data:`REGISTRY` (see ``tests/gui/state/test_view_kind_registry.py``, which adds one and finds it everywhere).

The attention kinds themselves (``enc``, ``dec``, ``cross``; paper §3.2.3) are
:class:`core.transformer.kinds.AttentionKind`; a view names the one it shows (None for the masks).
Masks are bool, **True = masked** (may not attend).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from core.transformer.kinds import AttentionKind
from gui.state.view_data import (
    CAUSAL_OFF_TITLE,
    MapData,
    StepMaps,
    ViewData,
    cross_view,
    decoder_view,
    encoder_view,
    step_maps,
)

if TYPE_CHECKING:
    from core.decoding.translate import Translation
    from core.transformer.config import ModelConfig

#: a derived cell a view can have: the mean over heads per layer, the attention rollout
DERIVED_CELLS = ("mean", "rollout")


@dataclass(frozen=True)
class ViewKind:
    """One view.

    ``name``: its key everywhere ("cross"): the view model's ``kind``, lecture files'
    ``view = …``, file names and .npz keys. ``title``: the menu and map text. ``attention``: the
    attention kind it shows, None for a view of mask cells (the Masks view). ``cut(step)``:
    its maps at a decoder step (a :class:`StepMaps`: the result's maps cut once) as
    :class:`MapData` (weights ``[L, H, rows, cols]``, rows =
    queries, columns = keys; mask ``[rows, cols]``, True = masked); None for the masks.
    ``derived``: its derived cells, a subset of :data:`DERIVED_CELLS` in grid order.
    ``cli``: its ``--view`` name (default ``name``). ``causal_off_title``: the title when a
    teacher-forced pass ran without the causal mask (None: the title stays)."""

    name: str
    title: str
    attention: AttentionKind | None
    cut: Callable[[StepMaps], MapData] | None
    derived: tuple[str, ...] = ("mean",)
    cli: str = ""
    causal_off_title: str | None = None

    def __post_init__(self) -> None:
        if (self.attention is None) != (self.cut is None):
            raise ValueError(f"view {self.name!r}: an attention view needs a cut, a masks view neither")
        if not set(self.derived) <= set(DERIVED_CELLS) or (self.attention is None and self.derived):
            raise ValueError(f"view {self.name!r}: derived cells must be among {DERIVED_CELLS}, none for masks")
        if not self.cli:
            object.__setattr__(self, "cli", self.name)

    @property
    def is_masks(self) -> bool:
        """True for a view of the masks given (cells of mask pictures, no heads)."""
        return self.attention is None

    @property
    def core_kind(self) -> str | None:
        """The attention kind's short name ("enc", "dec", "cross"), as core's functions take it."""
        return None if self.attention is None else self.attention.value

    @property
    def follows_steps(self) -> bool:
        """True when its maps change with the decoder step (their rows are decoder queries, none
        at step 0); False for the encoder's, computed once per sentence."""
        return self.attention is not AttentionKind.ENC

    def n_layers(self, config: ModelConfig) -> int:
        """Layers of its stack in a model of ``config``: the encoder's or the decoder's."""
        return int(config.n_encoder_layers if self.attention is AttentionKind.ENC else config.n_decoder_layers)

    @property
    def stack(self) -> str:
        """ "encoder" or "decoder": whose layers it shows (in messages)."""
        return "encoder" if self.attention is AttentionKind.ENC else "decoder"

    def title_of(self, result: Translation | None) -> str:
        """Its title for ``result`` (a Translation or None): :attr:`causal_off_title` for a
        teacher-forced pass without the causal mask (``result.causal`` False), else :attr:`title`."""
        if self.causal_off_title is not None and not getattr(result, "causal", True):
            return self.causal_off_title
        return self.title

    def drawn_key(self, result: Translation, k: int) -> tuple[object, int]:
        """What its picture at step ``k`` depends on: ``(tensor or maps, step)``; the tensor is held
        itself (a live state's new objects could reuse an id). Encoder maps do not change while the
        decoder steps: their key is the encoder's tensor and step 0."""
        return (result.maps, k) if self.follows_steps else (result.maps.encoder_self, 0)


#: every view, in menu order (name -> ViewKind). Read at call time: a test may add one.
REGISTRY: dict[str, ViewKind] = {
    v.name: v
    for v in (
        ViewKind("encoder", "Encoder self-attention", AttentionKind.ENC, encoder_view, ("mean", "rollout")),
        ViewKind(
            "decoder",
            "Decoder masked self-attention",
            AttentionKind.DEC,
            decoder_view,
            causal_off_title=CAUSAL_OFF_TITLE,
        ),
        ViewKind("cross", "Cross-attention (decoder → encoder)", AttentionKind.CROSS, cross_view),
        ViewKind("masks", "Masks", None, None, ()),
    )
}
DEFAULT = "cross"  # the view shown at start and in a lecture step without ``view``


def names() -> tuple[str, ...]:
    """Every view's name, in menu order."""
    return tuple(REGISTRY)


def all_kinds() -> tuple[ViewKind, ...]:
    """Every view, in menu order."""
    return tuple(REGISTRY.values())


def attention_views() -> tuple[ViewKind, ...]:
    """The views that show attention weights (every one but the masks), in menu order."""
    return tuple(v for v in REGISTRY.values() if not v.is_masks)


def get(name: str) -> ViewKind:
    """The view called ``name``.

    Raises:
        ValueError: no such view (the message lists the views)."""
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown view {name!r}; choose one of {', '.join(REGISTRY)}") from None


def by_cli(cli: str) -> ViewKind:
    """The view whose ``--view`` name is ``cli``. Raises ValueError for none."""
    for v in REGISTRY.values():
        if v.cli == cli:
            return v
    raise ValueError(f"unknown view {cli!r}; choose one of {', '.join(cli_names())}")


def cli_names() -> list[str]:
    """The ``--view`` choices, in menu order."""
    return [v.cli for v in REGISTRY.values()]


def for_attention(kind: str | AttentionKind) -> ViewKind:
    """The first view (in menu order) that shows attention ``kind`` ("enc", "dec", "cross").
    Raises ValueError for an unknown kind."""
    for v in REGISTRY.values():
        if v.attention is not None and v.attention == kind:
            return v
    raise ValueError(f"no view shows attention kind {kind!r}")


def view_at(result: Translation, k: int, kind: str, step: StepMaps | None = None) -> ViewData:
    """Heatmap data of view ``kind`` at step ``k`` (see :attr:`ViewKind.cut`): weights
    ``[L, H, rows, cols]``, the mask the query could not see ``[rows, cols]`` (True = masked:
    the mask the model was given, or, decoder under the KV cache, a key not computed yet).
    ``step``: the result's maps already cut to ``k`` (:func:`view_data.step_maps`), else cut here.

    Raises:
        ValueError: an unknown view, or the masks view (its cells: :func:`view_data.mask_cells`)."""
    v = get(kind)
    if v.cut is None:
        raise ValueError("the masks view has its own cells: use mask_cells()")
    m = v.cut(step if step is not None else step_maps(result, k))
    return ViewData(**{f.name: getattr(m, f.name) for f in fields(MapData)}, kind=v.name)


def view_title(result: Translation | None, kind: str) -> str:
    """The view's name in titles (:meth:`ViewKind.title_of`)."""
    return get(kind).title_of(result)


__all__ = [
    "DEFAULT",
    "DERIVED_CELLS",
    "REGISTRY",
    "ViewKind",
    "all_kinds",
    "attention_views",
    "by_cli",
    "cli_names",
    "for_attention",
    "get",
    "names",
    "view_at",
    "view_title",
]
