"""What a learn step's page says and draws (no Qt): the heading "5 / 18 · Learning: reverse — update
200 / 800", the probe pair and the model's output for it, the run's settings, the enlarged
cross-attention map of the probe pair at one snapshot with its row-argmax alignment, and which
snapshots the deck's strip shows. The snapshots are the Learn tab's
(:class:`core.training.live_session.Snapshot`); cross-attention rows are the target (decoder)
queries, columns the source keys."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.training.live_session import Snapshot
from gui.state.learn_view import LearnMap, enlarged_key, learn_map, map_title
from gui.state.lecture import Lecture, LectureStep
from gui.state.lecture_pages import Page


@dataclass(frozen=True)
class LearnFrame:
    """The map a learn step shows at one snapshot: ``map`` (the probe pair's cross-attention, every
    head), ``key`` (layer, head) enlarged, 0-based, ``matrix [T, S]`` that head's weights (rows sum
    to 1), ``title`` and ``hits`` / ``scored``: rows whose argmax lies on a known source position /
    rows with a known position (``known`` ``[T, S]`` bool, True where the row should look);
    ``short_title`` the title without the agreement (Present mode, where the note gives it)."""

    map: LearnMap
    key: tuple[int, int]
    matrix: np.ndarray
    title: str
    short_title: str
    hits: int
    scored: int
    known: np.ndarray | None


def learn_frame(step: LectureStep, snapshot: Snapshot) -> LearnFrame:
    """``step``'s map at ``snapshot``: the head the step names, else the snapshot's best head."""
    part = step.learn
    assert part is not None, "not a learn step"
    chosen = None if part.layer is None or part.head is None else (part.layer - 1, part.head - 1)
    m = learn_map(snapshot.evaluation.maps, "cross")
    key = enlarged_key(snapshot, "cross", chosen, part.follow_best)
    matrix = np.asarray(m.weights[key])
    known = snapshot.evaluation.maps.known_alignment
    hits = scored = 0
    if known is not None:
        rows = known.any(-1)
        scored = int(rows.sum())
        hits = int(known[np.flatnonzero(rows), matrix[rows].argmax(-1)].sum())
    best = " (the best head now)" if part.follow_best else ""
    short = f"cross-attention, layer {key[0] + 1} head {key[1] + 1}{best}, update {snapshot.updates}"
    return LearnFrame(m, key, matrix, map_title(snapshot, m, key) + best, short, hits, scored, known)


def learn_heading(lecture: Lecture, step: LectureStep, snapshot: Snapshot | None) -> str:
    """ "5 / 18 · Learning: reverse — update 200 / 800" (before the first snapshot: "building …")."""
    part = step.learn
    assert part is not None, "not a learn step"
    where = "building the model …" if snapshot is None else f"update {snapshot.updates} / {part.updates}"
    return f"{step.number} / {len(lecture.steps)} · {step.title} — {where}"


def learn_page(lecture: Lecture, step: LectureStep, snapshots: list[Snapshot], index: int) -> Page:
    """The page of ``step`` showing ``snapshots[index]`` (no snapshot yet: a page that says the
    model is being built)."""
    part = step.learn
    assert part is not None, "not a learn step"
    snap = snapshots[index] if 0 <= index < len(snapshots) else None
    page = Page(step.number, len(lecture.steps), learn_heading(lecture, step, snap), "", "", part.settings(), "", step.caption)
    if snap is None:
        page.drawn = "nothing yet: building the model"
        return page
    ev, frame = snap.evaluation, learn_frame(step, snap)
    src = "".join(t for t in ev.maps.src_tokens if not t.startswith("["))
    right = "".join(t for t in ev.maps.tgt_tokens if not t.startswith("["))
    page.sentence = f"probe {src}  →  {(ev.outputs[0] if ev.outputs else '') or '(nothing)'}   (right: {right})"
    page.where = f"snapshot {index + 1} / {len(snapshots)} · update {snap.updates} / {part.updates}"
    page.drawn = frame.title
    rows = f"row argmax on the known source position: {frame.hits} of {frame.scored} rows of this probe pair"
    if ev.alignment is not None and ev.best_head is not None:
        b = ev.best_head
        rows += f" · best head layer {b[0] + 1} head {b[1] + 1}: {ev.alignment:.0%} of all probe positions"
    loss = f"held-out loss {ev.heldout_nll:.3f} nats/token · exact match on {ev.accuracy:.0%} of the probe set"
    page.note = f"{loss}\n{rows}"
    return page


def strip_indices(n: int, k: int = 3) -> list[int]:
    """The ``k`` snapshots before the last one that the deck's strip shows, evenly spaced from the
    first (update 0), in order; fewer when there are fewer."""
    if n <= 1:
        return []
    return sorted({int(round(i)) for i in np.linspace(0, n - 1, k + 1)[:-1]} - {n - 1})


__all__ = ["LearnFrame", "learn_frame", "learn_heading", "learn_page", "strip_indices"]
