"""Short warnings about a result, for where the reader looks (the translation line and Present
mode's caption) rather than only the status bar: a source or reference cut to the model's length,
an output stopped by the length budget, characters the model does not know, input that is not
Korean and a low sentence score. Each is read from the result itself (its tokens and flags), the
same facts :mod:`core.decoding.translate` writes at length into ``Translation.notice``."""

from __future__ import annotations

from core.decoding.live import LiveState
from core.tokenizers.bpe import EOS, UNK


def result_warnings(state: LiveState | None, complete: bool) -> list[str]:
    """The warnings for ``state``'s result, in reading order (what went in, then what came out).

    ``complete``: the whole translation is on screen (the low-confidence flag is about the whole
    sentence, so it waits for it). The output's cut is known once the state is ``finished`` (its
    last step is then the budget's last, not ``[EOS]``); a teacher-forced result whose last target
    is not ``[EOS]`` fed a cut reference. Empty without a result."""
    if state is None:
        return []
    r = state.result
    src, out = r.source, []
    if src.notice:  # prepare_source cut the input to max_len - 1 tokens (+ EOS)
        out.append(f"input cut to its first {src.n_real - 1} tokens")
    n_unk = src.tokens.count(UNK)
    if n_unk:
        out.append(f"{n_unk} unknown character{'s' if n_unk > 1 else ''} shown as {UNK}")
    if r.not_korean:
        out.append("input is not Korean")
    cut = state.finished and bool(r.steps) and r.steps[-1].token != EOS
    if cut and r.mode == "teacher_forced":
        out.append(f"reference cut to its first {len(r.steps) - 1} tokens")
    elif cut:
        out.append(f"output stopped at the length limit ({len(r.steps)} tokens, no {EOS})")
    if complete and r.low_confidence:
        out.append(f"low confidence ({r.confidence:.2f} nats/token)")
    return out


__all__ = ["result_warnings"]
