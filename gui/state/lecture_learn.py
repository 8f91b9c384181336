"""Lecture steps that show how attention is learned (no Qt): ``learn = "reverse"`` in a ``[[steps]]``
table trains the Learn tab's small Transformer on a toy task whose right cross-attention is known
(core/training/toy_tasks.py) instead of translating a sentence::

    [[steps]]
    title = "Watching attention being learned"   # optional (default "Learning: reverse")
    learn = "reverse"       # copy | reverse | sort | numbers
    updates = 800           # the last update (default: the task's preset, 400 to 800)
    every = 50              # a snapshot every so many updates (default 50)
    seed = 0                # model initialisation and batch order (default 0)
    layer = 2               # with head: always enlarge this head (1-based);
    head = 3                # without both: the best head at each snapshot
    caption = "…"

The run uses the Learn tab's default settings (:class:`core.training.live_session.LiveSettings`).
:func:`read_learn` reads such a table; its problems are reported through the step's ``problem``
callback like every other step's ("lecture step 4, updates: must be 1..20000, got 0")."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass

LEARN_TASKS = ("copy", "reverse", "sort", "numbers")  # the toy tasks with a known alignment
# Updates after which the default settings have learned each task (toy_tasks.PRESET_UPDATES; torch-free here)
PRESETS = {"copy": 400, "reverse": 800, "sort": 600, "numbers": 600}
MAX_UPDATES = 20_000
EVERY = 50
#: the fields of a learn step: name -> type
LEARN_FIELDS: dict[str, type] = {
    "learn": str,
    "title": str,
    "updates": int,
    "every": int,
    "seed": int,
    "layer": int,
    "head": int,
    "caption": str,
}
# the defaults of LiveSettings (checked against it by tests/gui/lecture/test_learn_step.py)
LAYERS, HEADS, D_MODEL = 2, 4, 64


@dataclass(frozen=True)
class LearnPart:
    """What a learn step trains and shows: ``task`` (one of :data:`LEARN_TASKS`), ``updates`` (the
    last update), ``every`` (updates between snapshots), ``seed``; ``layer`` and ``head`` (1-based)
    the head to enlarge, or both None: the best head of each snapshot (the one whose row argmax
    agrees most with the known alignment)."""

    task: str
    updates: int
    every: int = EVERY
    seed: int = 0
    layer: int | None = None
    head: int | None = None

    @property
    def follow_best(self) -> bool:
        """True when each snapshot enlarges its best head."""
        return self.layer is None or self.head is None

    @property
    def run(self) -> tuple[str, int, int, int]:
        """What makes two steps the same run: (task, updates, every, seed)."""
        return (self.task, self.updates, self.every, self.seed)

    def settings(self) -> str:
        """The run in words: model, seed, snapshots, head shown."""
        head = "the best head" if self.follow_best else f"layer {self.layer} head {self.head}"
        return (
            f"training {self.task}: {LAYERS} + {LAYERS} layers × {HEADS} heads, d_model {D_MODEL} · seed {self.seed} · "
            f"a snapshot every {self.every} updates to {self.updates} · {head}"
        )

    def fields(self) -> dict[str, object]:
        """The file's fields for this part (defaults left out), in :data:`LEARN_FIELDS` order."""
        values = {
            "learn": self.task,
            "updates": None if self.updates == PRESETS[self.task] else self.updates,
            "every": None if self.every == EVERY else self.every,
            "seed": self.seed or None,
            "layer": self.layer,
            "head": self.head,
        }
        return {k: v for k, v in values.items() if v is not None}


def _value(name: str, value, problem: Callable[[str, str], None]):
    kind = LEARN_FIELDS[name]
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        problem(name, f"must be a whole number, got {value!r}")
        return None
    if kind is str and not isinstance(value, str):
        problem(name, f"must be a string, got {value!r}")
        return None
    return value


def _within(name: str, value, low: int, high: int, why: str, problem) -> int | None:
    if value is not None and not low <= value <= high:
        problem(name, f"must be {low}..{high}{why}, got {value}")
        return None
    return value


def read_learn(table: dict, problem: Callable[[str, str], None]) -> tuple[LearnPart | None, str, str]:
    """A ``[[steps]]`` table with ``learn``: its :class:`LearnPart` (None when the task is wrong),
    title and caption. Every problem goes to ``problem(field, text)``: an unknown task, a field a
    learn step does not take (``sentence``, ``view`` …), a typo, numbers out of range."""
    values = {}
    for name, value in table.items():
        if name not in LEARN_FIELDS:
            near = difflib.get_close_matches(name.replace("-", "_"), list(LEARN_FIELDS), n=1, cutoff=0.6)
            hint = f"did you mean {near[0]!r}?" if near else f"a learn step takes {', '.join(LEARN_FIELDS)}"
            problem(name, f"not a field of a learn step ({hint})")
            continue
        values[name] = _value(name, value, problem)
    task = values.get("learn")
    if task is not None and task.strip() not in LEARN_TASKS:
        problem("learn", f"{task!r} is not one of {', '.join(LEARN_TASKS)} (the tasks whose alignment is known)")
        task = None
    title, caption = (values.get("title") or "").strip(), (values.get("caption") or "").strip()
    updates = _within("updates", values.get("updates"), 1, MAX_UPDATES, "", problem)
    every = _within("every", values.get("every"), 1, MAX_UPDATES, " (updates between snapshots)", problem)
    seed = _within("seed", values.get("seed"), 0, 2**31 - 1, "", problem)
    layer = _within("layer", values.get("layer"), 1, LAYERS, f" (the toy model has {LAYERS} decoder layers)", problem)
    head = _within("head", values.get("head"), 1, HEADS, f" (the toy model has {HEADS} heads)", problem)
    if ("layer" in values) != ("head" in values):
        problem("head" if "layer" in values else "layer", "layer and head go together (without both: the best head)")
        layer = head = None
    if task is None:
        return None, title, caption
    task = task.strip()
    part = LearnPart(task, updates or PRESETS[task], every or EVERY, seed or 0, layer, head)
    return part, title, caption


__all__ = ["EVERY", "LEARN_FIELDS", "LEARN_TASKS", "LearnPart", "MAX_UPDATES", "PRESETS", "read_learn"]
