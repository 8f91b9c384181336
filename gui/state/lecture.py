"""Lecture files (no Qt): a title and a list of steps, each one state of the app with a caption,
read from TOML (``tomllib``, Python 3.11+) and checked against a model's config; written back one
step at a time by :mod:`gui.state.lecture_toml` (File → Save state as lecture step…), shown as pages
by :mod:`gui.state.lecture_pages`. The format is documented in
``docs/lectures.md``; in short::

    title = "Attention Is All You Need"

    [[steps]]
    title = "Cross-attention"               # optional heading of the page
    sentence = "고양이가 의자 위에서 자고 있다."  # required: the Korean input
    view = "cross"                          # encoder | decoder | cross | masks (gui/state/view_kinds.py)
    layer = 4                               # 1-based (default 1)
    head = 1                                # 1-based (default 1)
    step = 2                                # decoder step shown (default: the end)
    caption = "Row ▁A (predicting 'cat') rests on 고양이가."

Other fields: ``reference`` (teacher forcing), ``causal_mask = false`` (with a reference),
``batch_with`` (a second sentence in one padded batch), ``pad_to``, ``decoding`` ("greedy" or
"beam") with ``beam`` (size), ``mask`` (1..4, the Masks view's cell), ``ablate = "2:3,3:1"`` with
``ablate_kind`` (enc | dec | cross), ``force`` (an English word) with ``force_at`` (the decoder
step whose token it replaces), ``query`` (1-based row: the Inside one step tab).

A step with ``learn = "reverse"`` (copy, reverse, sort, numbers) translates nothing: it trains the
Learn tab's small Transformer on that toy task and shows its cross-attention being learned (its
fields and checks: :mod:`gui.state.lecture_learn`).

A step that is wrong (a head the model lacks, a typo in a field name, a bad combination) does not
stop the lecture: its problems are listed in :attr:`LectureStep.errors` as "lecture step N,
field: what is wrong", and the app shows them as that step's caption. Only a file that cannot be
read or parsed at all raises :class:`LectureError`.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from core.defaults import MAX_BEAM
from core.errors import StudioError
from core.transformer.kinds import KINDS as ABLATE_KINDS
from gui.state import view_kinds
from gui.state.lecture_learn import LearnPart, read_learn

DECODINGS = ("greedy", "beam")
N_MASKS = 4  # the Masks view's cells: decoder self, cross, encoder key, target key padding
DEFAULT_BEAM = 4  # decoding = "beam" without a size

#: every field of a step: name -> (type, default); int fields are whole numbers (not booleans)
FIELDS: dict[str, tuple[type, object]] = {
    "title": (str, ""),
    "sentence": (str, ""),
    "caption": (str, ""),
    "reference": (str, None),
    "batch_with": (str, None),
    "decoding": (str, None),
    "beam": (int, None),
    "view": (str, view_kinds.DEFAULT),
    "layer": (int, 1),
    "head": (int, 1),
    "mask": (int, None),
    "step": (int, None),
    "causal_mask": (bool, True),
    "pad_to": (int, None),
    "ablate": (str, None),
    "ablate_kind": (str, None),
    "force": (str, None),
    "force_at": (int, None),
    "query": (int, None),
}
TOP_FIELDS = ("title", "checkpoint", "steps")
#: the order a saved step lists its fields in
ORDER = (
    "title",
    "sentence",
    "reference",
    "causal_mask",
    "batch_with",
    "pad_to",
    "decoding",
    "beam",
    "view",
    "layer",
    "head",
    "mask",
    "step",
    "force",
    "force_at",
    "ablate",
    "ablate_kind",
    "query",
    "caption",
)


class LectureError(StudioError):
    """The lecture file cannot be read or is not TOML (with the file and what is wrong)."""


@dataclass
class LectureStep:
    """One step of a lecture (numbers 1-based, as in the file). ``number`` is its place in the
    lecture; ``decoder_step`` the ``step`` field (None = the end of the output); ``errors`` the
    problems found (empty: the step can be shown)."""

    number: int
    title: str = ""
    sentence: str = ""
    caption: str = ""
    reference: str | None = None
    batch_with: str | None = None
    decoding: str = "greedy"
    beam: int = 1
    view: str = view_kinds.DEFAULT
    layer: int = 1
    head: int = 1
    mask: int = 1
    decoder_step: int | None = None
    causal_mask: bool = True
    pad_to: int | None = None
    ablate: str | None = None
    ablate_kind: str = "enc"
    force: str | None = None
    force_at: int | None = None
    query: int | None = None
    learn: LearnPart | None = None  # a learn step: the toy run it trains and shows (None: a translation step)
    errors: list[str] = field(default_factory=list)  # found when reading (no model needed)
    model_errors: list[str] = field(default_factory=list)  # found by check_step against the loaded model

    @property
    def ok(self) -> bool:
        """True when the step has no problems (as read, and against the model last checked)."""
        return not self.errors and not self.model_errors

    @property
    def problems(self) -> list[str]:
        """Every problem of the step, one line each."""
        return self.errors + self.model_errors

    @property
    def live(self) -> bool:
        """True when the step decodes live (greedy or beam; no reference, no batch)."""
        return self.reference is None and self.batch_with is None and self.learn is None

    def problem(self, name: str, text: str, model: bool = False) -> None:
        """Record a problem with field ``name`` ("" for the step as a whole); ``model``: one
        that depends on the model (dropped when another model is checked)."""
        where = f"lecture step {self.number}" + (f", {name}" if name else "")
        (self.model_errors if model else self.errors).append(f"{where}: {text}")

    def settings(self) -> str:
        """The switches in words: "greedy", "beam 4", "teacher forcing, causal mask OFF", …"""
        if self.learn is not None:
            return self.learn.settings()
        parts = []
        if self.reference is not None:
            parts.append("teacher forcing on the reference" + ("" if self.causal_mask else ", causal mask OFF"))
        elif self.batch_with is not None:
            parts.append("padded batch of 2, greedy")
        else:
            parts.append("greedy" if self.beam == 1 else f"beam {self.beam}")
        if self.pad_to:
            parts.append(f"source padded to {self.pad_to}")
        if self.force is not None:
            parts.append(f"forced {self.force!r} at step {self.force_at}")
        if self.ablate is not None:
            parts.append(f"ablated {self.ablate_kind} {self.ablate}")
        if self.query is not None:
            parts.append(f"inside one step, query {self.query}")
        return " · ".join(parts)


@dataclass
class Lecture:
    """A lecture: its ``title``, ``steps`` and the file it came from; ``checkpoint`` names the
    model its captions were written for (informational); ``errors`` the problems outside the steps."""

    title: str
    steps: list[LectureStep]
    path: Path | None = None
    checkpoint: str | None = None
    errors: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        """Every problem of the lecture and its steps, one line each."""
        return list(self.errors) + [e for s in self.steps for e in s.problems]


# ---------------------------------------------------------------------------------------------- reading


def _typed(step: LectureStep, name: str, value):
    kind = FIELDS[name][0]
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        step.problem(name, f"must be a whole number, got {value!r}")
        return None
    if kind is not int and not isinstance(value, kind):
        step.problem(name, f"must be {'true or false' if kind is bool else 'a string'}, got {value!r}")
        return None
    return value


def _one_of(step: LectureStep, name: str, value, choices: tuple[str, ...]):
    if value is not None and value not in choices:
        step.problem(name, f"{value!r} is not one of {', '.join(choices)}")
        return None
    return value


def _at_least(step: LectureStep, name: str, value, low: int, what: str = "") -> int | None:
    if value is not None and value < low:
        step.problem(name, f"must be {low} or more{what}, got {value}")
        return None
    return value


def read_step(number: int, table) -> LectureStep:
    """One ``[[steps]]`` table → a :class:`LectureStep` with its problems that need no model
    (types, names, ranges, combinations); see :func:`check_step` for those that do."""
    step = LectureStep(number)
    if not isinstance(table, dict):
        step.problem("", "is not a table of fields ([[steps]] with name = value lines)")
        return step
    if "learn" in table:  # trains a toy model instead of translating (gui/state/lecture_learn.py)
        step.learn, step.title, step.caption = read_learn(table, step.problem)
        step.title = step.title or f"Learning: {table['learn']}"
        return step
    values = {}
    for name, value in table.items():
        if name not in FIELDS:
            near = difflib.get_close_matches(name.replace("-", "_"), list(FIELDS), n=1, cutoff=0.6)
            hint = f" (did you mean {near[0]!r}?)" if near else f"; known fields: {', '.join(FIELDS)}"
            step.problem(name, f"unknown field{hint}")
            continue
        values[name] = _typed(step, name, value)
    get = values.get
    step.title = (get("title") or "").strip()
    step.caption = (get("caption") or "").strip()
    step.sentence = (get("sentence") or "").strip()
    if not step.sentence:
        step.problem("sentence", "missing or empty: every step translates a Korean sentence")
    for name in ("reference", "batch_with", "ablate", "force"):
        value = get(name)
        if value is not None and not value.strip():
            step.problem(name, "is empty")
            value = None
        setattr(step, name, None if value is None else value.strip())
    step.view = _one_of(step, "view", get("view"), view_kinds.names()) or view_kinds.DEFAULT
    step.layer = _at_least(step, "layer", get("layer"), 1, " (layers are numbered from 1)") or 1
    step.head = _at_least(step, "head", get("head"), 1, " (heads are numbered from 1)") or 1
    step.mask = _at_least(step, "mask", get("mask"), 1) or 1
    step.decoder_step = _at_least(step, "step", get("step"), 0)
    step.pad_to = _at_least(step, "pad_to", get("pad_to"), 1)
    step.query = _at_least(step, "query", get("query"), 1, " (queries are numbered from 1)")
    step.force_at = _at_least(step, "force_at", get("force_at"), 1, " (decoder steps are numbered from 1)")
    step.causal_mask = True if get("causal_mask") is None else bool(get("causal_mask"))
    step.ablate_kind = _one_of(step, "ablate_kind", get("ablate_kind"), ABLATE_KINDS) or "enc"
    decoding = _one_of(step, "decoding", get("decoding"), DECODINGS)
    beam = get("beam")
    if beam is not None and not 1 <= beam <= MAX_BEAM:
        step.problem("beam", f"must be 1..{MAX_BEAM}, got {beam}")
        beam = None
    if decoding == "greedy" and beam not in (None, 1):
        step.problem("beam", f'beam = {beam} with decoding = "greedy": use decoding = "beam"')
    step.beam = 1 if decoding == "greedy" else beam or (DEFAULT_BEAM if decoding == "beam" else 1)
    step.decoding = "greedy" if step.beam == 1 else "beam"
    _check_combinations(step, get)
    return step


def _check_combinations(step: LectureStep, get) -> None:
    if step.mask != 1 or get("mask") is not None:
        if not view_kinds.get(step.view).is_masks:
            step.problem("mask", 'only with view = "masks" (layer and head choose the map in the other views)')
        elif step.mask > N_MASKS:
            step.problem("mask", f"{step.mask} is out of range 1..{N_MASKS} (decoder self, cross, encoder key, target padding)")
    if not step.causal_mask and step.reference is None:
        step.problem("causal_mask", "false needs a reference (the mask is switched off for teacher forcing)")
    if step.reference is not None and step.batch_with is not None:
        step.problem("batch_with", "cannot be combined with a reference")
    if step.batch_with is not None and (step.beam != 1 or step.pad_to):
        step.problem("batch_with", "runs greedy decoding of two plain sentences: drop beam and pad_to")
    if step.reference is not None and step.beam != 1:
        step.problem("beam", "teacher forcing (a reference) does not decode: drop decoding/beam")
    if (step.force is None) != (step.force_at is None):
        step.problem("force" if step.force is None else "force_at", "force and force_at go together")
    for name in ("force", "query", "ablate"):
        if getattr(step, name) is not None and not step.live:
            step.problem(name, "works on decoded output: not with a reference or batch_with")
    if step.query is not None and view_kinds.get(step.view).is_masks:
        *views, last = (v.name for v in view_kinds.attention_views())
        step.problem("query", f"needs view {', '.join(views)} or {last} (a mask has no attention step)")
    if step.ablate is not None:
        from core.analysis.ablation import parse_heads

        try:
            parse_heads(step.ablate)
        except StudioError as exc:
            step.problem("ablate", str(exc).replace("--ablate ", ""))
    if get("ablate_kind") is not None and step.ablate is None:
        step.problem("ablate_kind", "needs ablate (the heads)")


def tomllib_module():
    """The standard library's ``tomllib`` (Python 3.11+).

    Raises:
        LectureError: on an older Python, which has none."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        raise LectureError("lecture files need Python 3.11 or newer (its tomllib reads them)") from None
    return tomllib


def parse_lecture(text: str, path: Path | str | None = None) -> Lecture:
    """A lecture from TOML ``text``. Raises :class:`LectureError` when it is not TOML or has no
    steps; problems of single steps are kept in the steps (the lecture still opens)."""
    tomllib = tomllib_module()
    where = str(path) if path is not None else "lecture"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LectureError(f"{where}: not valid TOML: {exc}") from None
    steps = data.get("steps")
    if not isinstance(steps, list) or not steps:
        raise LectureError(f"{where}: no steps: add at least one [[steps]] table with a sentence")
    lecture = Lecture(
        str(data.get("title") or Path(where).stem),
        [read_step(i, t) for i, t in enumerate(steps, 1)],
        Path(path) if path is not None else None,
    )
    lecture.checkpoint = data.get("checkpoint") if isinstance(data.get("checkpoint"), str) else None
    for name in data:
        if name not in TOP_FIELDS:
            lecture.errors.append(f"{where}: unknown top-level field {name!r} (known: {', '.join(TOP_FIELDS)})")
    return lecture


def load_lecture(path: Path | str) -> Lecture:
    """Read and parse the lecture file ``path``. Raises :class:`LectureError` (unreadable, not
    UTF-8, not TOML, no steps)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LectureError(f"{path}: cannot read the lecture: {exc}") from None
    return parse_lecture(text, path)


__all__ = [
    "Lecture",
    "LectureError",
    "LectureStep",
    "FIELDS",
    "load_lecture",
    "parse_lecture",
    "read_step",
    "tomllib_module",
]
