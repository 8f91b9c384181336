"""What a lecture step's page says, as plain text: the heading, the sentence, the settings and what is
drawn (:class:`Page`, from the view model showing the step), the note of what the step's experiment
gave (losses, the forked output, the beam, the inside of one step, an ablation) and the page as
Markdown for ``captions.md``. No Qt."""

from __future__ import annotations

import math
from dataclasses import dataclass

from gui.state import view_kinds
from gui.state.lecture import Lecture, LectureStep


@dataclass
class Page:
    """What one lecture step's page says (the map itself is the view model's :class:`gui.state.view_spec.ViewFrame`):
    ``heading`` "3 / 12 · title", ``sentence`` source → output so far, ``where`` the decoder step,
    ``settings`` the switches, ``drawn`` the kind, layer and head of the map, ``caption``, ``note``
    (what the experiment gave: losses, the ablated output, the inside of the step …) and ``error``
    (the step's problems; then nothing of the step is shown)."""

    number: int
    total: int
    heading: str
    sentence: str
    where: str
    settings: str
    drawn: str
    caption: str
    note: str = ""
    error: str = ""


def heading(lecture: Lecture, step: LectureStep) -> str:
    """ "3 / 12 · Encoder self-attention" (the step's title, else its view)."""
    return f"{step.number} / {len(lecture.steps)} · {step.title or view_kinds.get(step.view).title}"


def page_of(lecture: Lecture, step: LectureStep, vm=None, note: str = "", error: str = "") -> Page:
    """The texts of ``step``'s page from the view model ``vm`` that shows it (None or ``error``:
    an error page that repeats the step as written)."""
    problems = error or "\n".join(step.problems)
    base = Page(
        step.number,
        len(lecture.steps),
        heading(lecture, step),
        step.sentence,
        "",
        step.settings(),
        "",
        step.caption,
        note,
        problems,
    )
    if problems or vm is None or vm.result is None:
        base.drawn = "nothing: " + ("see the problem below" if problems else "no result")
        if problems:
            base.caption = "⚠ " + problems
        return base
    r = vm.result
    so_far = vm.full_text() if vm.step >= len(r.steps) and vm.full_text() is not None else vm.text_at()
    base.sentence = f"{r.source.text}  →  {so_far or '…'}" + ("  (the reference)" if vm.teacher_forced else "")
    base.where = vm.step_description()
    frame = vm.frame()
    base.drawn = frame.enlarged.presenter_title if frame is not None else ""
    return base


def page_markdown(page: Page, image: str | None = None) -> str:
    """One page as Markdown (``captions.md``): heading, image, sentence, what is drawn, caption, note."""
    lines = [f"## {page.heading}", ""]
    if image:
        lines += [f"![step {page.number}]({image})", ""]
    lines += [f"- **Sentence:** {page.sentence}"]
    if page.where:
        lines.append(f"- **Step:** {page.where}")
    lines += [f"- **Settings:** {page.settings}", f"- **Drawn:** {page.drawn}", ""]
    if page.caption:
        lines += [page.caption, ""]
    if page.note:
        lines += ["```text", page.note, "```", ""]
    return "\n".join(lines)


def result_note(vm, step: LectureStep) -> str:
    """What the step's experiment gave, in a few lines, from the view model showing it: the
    teacher-forcing loss, the forked and original outputs, the beam's hypotheses, the padding."""
    r = vm.result
    if r is None:
        return ""
    lines = []
    if vm.teacher_forced:
        lines.append(vm.loss_text())
        lines.append(f"the model's own argmax at each reference position: {r.translation}")
        probs = " · ".join(f"{st.token} {math.exp(st.logprob):.2f}" for st in r.steps if st.logprob is not None)
        if probs:
            lines.append(f"p(reference token) at each position: {probs}")
    fork = vm.side_by_side()
    if fork:
        lines += [f"{label}: {text}" + ("" if lp is None else f"  (log P {lp:.2f})") for label, text, lp in fork]
    if r.mode == "beam" and r.hypotheses:
        lps = r.hypothesis_logprobs
        best = ", ".join(
            f"{text!r} {score:.3f}" + (f" (log P {lps[i]:.2f})" if i < len(lps) else "")
            for i, (text, score, _) in enumerate(r.hypotheses[:3])
        )
        lines.append(f"beam {r.beam}, best hypotheses (score = log P / length penalty): {best}")
    pads = int(r.maps.src_key_padding_mask.sum())
    if pads:
        w = r.maps.cross[..., r.maps.src_key_padding_mask]
        lines.append(f"{pads} pad key(s) in the source; the most attention any cross head gives one: {float(w.max()):.1f}")
    if vm.state is not None and vm.state.batch:
        lines.append("batch: " + " | ".join(f"{b.source.text} → {b.translation}" for b in vm.state.batch))
    return "\n".join(lines)


def inside_note(st, limit: int = 12) -> str:
    """An :class:`core.analysis.inside.InsideStep` as text: the query, then per key (a tab
    between the columns) the score q·k/√d_k (−∞ where masked) and the softmax weight, in key
    order (the ``limit`` keys with the most weight when there are more)."""
    d = int(st.q.numel())
    lines = [f"query {st.query} {st.query_token} · layer {st.layer}, head {st.head} · d_k = {d}", "key\tq·k/√d_k\tweight"]
    weights = st.weights.tolist()
    keep = sorted(sorted(range(len(weights)), key=lambda i: -weights[i])[:limit])
    for i in keep:
        masked = st.mask is not None and bool(st.mask[i])
        score = "−∞" if masked else f"{float(st.scores[i]):.2f}"
        lines.append(f"{st.key_tokens[i]}\t{score}\t{weights[i]:.3f}")
    return "\n".join(lines)


def ablation_note(result) -> str:
    """An :class:`core.analysis.ablation.AblationResult` as two lines: unablated and ablated output."""
    spec = ",".join(f"{la}:{h}" for la, h in result.heads)

    def lp(t) -> str:
        return "" if t.logprob is None else f"  (log P {t.logprob:.2f})"

    return (
        f"unablated: {result.original.translation}{lp(result.original)}\n"
        f"ablated {result.kind} {spec}: {result.ablated.translation}{lp(result.ablated)}"
    )


__all__ = ["Page", "ablation_note", "heading", "inside_note", "page_markdown", "page_of", "result_note"]
