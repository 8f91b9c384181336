"""Writing lecture files: a step as TOML (the format of :mod:`gui.state.lecture` and
``docs/lectures.md``), a whole lecture, and File → Save state as lecture step…, which appends one step
to a file (creating it with a title when it does not exist)."""

from __future__ import annotations

import math
from pathlib import Path

from gui.state import view_kinds
from gui.state.lecture import ORDER, LectureError, LectureStep, tomllib_module


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string (quotes, backslashes and control characters escaped)."""
    out = []
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    return toml_string(str(value))


def step_fields(step: LectureStep) -> dict[str, object]:
    """The fields a file needs to reproduce ``step`` (defaults left out), in :data:`ORDER` (a learn
    step: title, its run's fields, caption)."""
    if step.learn is not None:
        title = None if step.title == f"Learning: {step.learn.task}" else step.title or None
        return {**({"title": title} if title else {}), **step.learn.fields(), "caption": step.caption}
    masks = view_kinds.get(step.view).is_masks
    values = {
        "title": step.title or None,
        "sentence": step.sentence,
        "reference": step.reference,
        "causal_mask": None if step.causal_mask else False,
        "batch_with": step.batch_with,
        "pad_to": step.pad_to,
        "decoding": "beam" if step.beam > 1 else None,
        "beam": step.beam if step.beam > 1 else None,
        "view": step.view,
        "layer": None if masks else step.layer,
        "head": None if masks else step.head,
        "mask": step.mask if masks else None,
        "step": step.decoder_step,
        "force": step.force,
        "force_at": step.force_at,
        "ablate": step.ablate,
        "ablate_kind": step.ablate_kind if step.ablate is not None else None,
        "query": step.query,
        "caption": step.caption,
    }
    return {name: values[name] for name in ORDER if values[name] is not None}


def step_toml(step: LectureStep) -> str:
    """One ``[[steps]]`` table as TOML text (ends with a newline)."""
    lines = ["[[steps]]"] + [f"{name} = {_toml_value(value)}" for name, value in step_fields(step).items()]
    return "\n".join(lines) + "\n"


def lecture_toml(title: str, steps: list[LectureStep]) -> str:
    """A whole lecture file: the title, then one table per step."""
    return f"title = {toml_string(title)}\n" + "".join("\n" + step_toml(s) for s in steps)


def append_step(path: Path | str, step: LectureStep, title: str = "My lecture") -> int:
    """Append ``step`` to the lecture file ``path`` (created with ``title`` when missing) and
    return its number in the file. Raises :class:`LectureError` when the file exists but is not
    a lecture (it is left unchanged) or cannot be written."""
    path = Path(path)
    if path.exists():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise LectureError(f"{path}: cannot read the lecture: {exc}") from None
        tomllib = tomllib_module()
        try:
            steps = tomllib.loads(text).get("steps", [])
        except tomllib.TOMLDecodeError as exc:
            raise LectureError(f"{path}: not valid TOML, left unchanged: {exc}") from None
        if not isinstance(steps, list):
            raise LectureError(f"{path}: 'steps' is not a list of [[steps]] tables, left unchanged")
        number = len(steps) + 1
        if not text.strip():
            text = f"title = {toml_string(title)}\n"
        body = text if text.endswith("\n") else text + "\n"
    else:
        number, body = 1, f"title = {toml_string(title)}\n"
    step.number = number
    try:
        path.write_text(body + "\n" + step_toml(step), encoding="utf-8")
    except OSError as exc:
        raise LectureError(f"{path}: cannot write the lecture: {exc}") from None
    return number


__all__ = ["append_step", "lecture_toml", "step_fields", "step_toml", "toml_string"]
