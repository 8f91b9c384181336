"""What a translation says about itself: whether its input was Korean at all, and how sure the
model was (the sentence score a reader can check against the step probabilities on screen).

The sentence score is the mean log-probability per output token, EOS included, in nats:
``log P(output | source) / N`` (the length-normalised score of NMT confidence estimation, e.g.
Fomicheva et al. 2020, "Unsupervised Quality Estimation for Neural Machine Translation", the
"Seq-Prob" / "TP" indicator). It is 0 for an output the model was certain of and falls as any
step's chosen token had less probability. :data:`LOW_CONFIDENCE_NATS` is the threshold below
which a translation is flagged, calibrated as its comment says.
"""

from __future__ import annotations

import unicodedata

#: Mean log-probability per token (nats) below which a translation is flagged "low confidence".
#: Calibrated on the shipped ko-en-nc's greedy outputs judged acceptable or not by readers who saw no
#: scores (docs/experiments/calibrate_confidence.py; threshold at the best Youden's J): 263 distinct
#: sentences, 68 acceptable. 220 are the blind sets (tests/fixtures/blind_*.tsv) judged by two fresh readers
#: (docs/experiments/blind-judge-stage11, scores in docs/experiments/confidence-stage11-blind/; one output that
#: differs when translated alone left out); the other 43 are the old lecture fixture and the fresh sets
#: (verdicts reused from docs/experiments/confidence-stage11/, whose 57 blind sentences got the same verdict
#: from the new readers 56 times). AUROC 0.921; below -0.41 flags 78 % of the unacceptable outputs, 94 %
#: of the flagged are unacceptable, 87 % of the acceptable stay unflagged (J 0.652; -0.28, the previous
#: threshold from 101 outputs, flags 96 % but leaves only 65 % of the acceptable unflagged, J 0.611).
#: ``python docs/experiments/calibrate_confidence.py fit docs/experiments/confidence-stage11
#: docs/experiments/confidence-stage11-blind`` prints these figures.
LOW_CONFIDENCE_NATS = -0.41


def has_hangul(text: str) -> bool:
    """True when ``text`` holds at least one Hangul syllable or jamo (U+AC00–U+D7A3, U+1100–U+11FF,
    U+3130–U+318F, U+A960–U+A97F, U+D7B0–U+D7FF)."""
    return any(
        "\uac00" <= ch <= "\ud7a3"
        or "\u1100" <= ch <= "\u11ff"
        or "\u3130" <= ch <= "\u318f"
        or "\ua960" <= ch <= "\ua97f"
        or "\ud7b0" <= ch <= "\ud7ff"
        for ch in text
    )


def symbols_only(text: str) -> bool:
    """True when ``text`` has something to show but no letter and no digit: only emoji, symbols,
    punctuation and spaces ("🙂🙂🙂", "→ ★ !!"). There is nothing to translate in it."""
    seen = False
    for ch in text:
        cat = unicodedata.category(ch)
        if cat[0] in "LN":
            return False
        seen = seen or not ch.isspace()
    return seen


def mean_logprob(total: float | None, n_tokens: int) -> float | None:
    """``total`` log P (nats) over ``n_tokens`` output tokens, or None without tokens or a total."""
    if total is None or n_tokens <= 0:
        return None
    return total / n_tokens


def is_low_confidence(score: float | None, threshold: float = LOW_CONFIDENCE_NATS) -> bool:
    """True when the sentence score is below ``threshold`` nats per token (False without a score)."""
    return score is not None and score < threshold


NOT_KOREAN = (
    "the input has no Korean (Hangul) text: this model translates Korean to English, so expect little sense; translated anyway"
)


__all__ = ["LOW_CONFIDENCE_NATS", "NOT_KOREAN", "has_hangul", "is_low_confidence", "mean_logprob", "symbols_only"]
