"""A lecture checked against the model that will present it (no Qt): the layer and head ranges of
each step's view, its ablated heads and ``pad_to`` against the model's ``max_len``. The file format
itself, read and checked without a model, is :mod:`gui.state.lecture`."""

from __future__ import annotations

from core.errors import StudioError
from gui.state import view_kinds
from gui.state.lecture import Lecture, LectureStep


def check_step(step: LectureStep, config) -> list[str]:
    """The problems of ``step`` that depend on the model (``config``: a ModelConfig): layer and
    head ranges for its view, the ablated heads, ``pad_to`` against ``max_len``. They replace
    ``step.model_errors`` (a step checked against another model before forgets those) and are
    returned."""
    from core.analysis.ablation import ablation_spec, parse_heads

    step.model_errors = []
    if step.learn is not None or any(e.split(":")[0].endswith(", learn") for e in step.errors):
        return []  # a learn step trains its own toy model: nothing to check against this one
    view = view_kinds.get(step.view)
    if not view.is_masks:
        n_layers, side = view.n_layers(config), view.stack
        if step.layer > n_layers:
            step.problem(
                "layer", f"{step.layer} is out of range 1..{n_layers} (the model has {n_layers} {side} layers)", model=True
            )
        if step.head > config.n_heads:
            step.problem(
                "head", f"{step.head} is out of range 1..{config.n_heads} (the model has {config.n_heads} heads)", model=True
            )
    if step.ablate is not None and not any("ablate" in e.split(":")[0] for e in step.errors):
        n_layers = config.n_encoder_layers if step.ablate_kind == "enc" else config.n_decoder_layers
        try:
            ablation_spec(parse_heads(step.ablate), step.ablate_kind, n_layers, config.n_heads)
        except StudioError as exc:
            step.problem("ablate", str(exc).replace("--ablate ", ""), model=True)
    if step.pad_to is not None and step.pad_to > config.max_len:
        step.problem("pad_to", f"{step.pad_to} is longer than the model's max_len {config.max_len}", model=True)
    return list(step.model_errors)


def check_lecture(lecture: Lecture, config) -> list[str]:
    """Check every step against ``config`` (:func:`check_step`); returns every problem of the lecture."""
    for step in lecture.steps:
        check_step(step, config)
    return lecture.problems()


__all__ = ["check_lecture", "check_step"]
