"""Per-token log-probabilities for the app's ablation panel ("Interventions").

:func:`core.analysis.ablation.translate_ablated` gives the two translations and the total
log P of the unablated output under the ablated model. The panel also lists that change **per
output token**: each token of the unablated output is forced, in order, on the KV cache of the
ablated model (the same computation as the total, kept token by token).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.analysis.ablation import AblationResult, ablation_spec, translate_ablated
from core.checkpoints.checkpoint import Checkpoint
from core.decoding.experiments import step_logprob
from core.decoding.session import DecodeSession
from core.transformer.ablation import ablated


def forced_logprobs(
    ckpt: Checkpoint, text: str, token_ids: list[int], pad_to: int | None = None, should_stop=None
) -> list[float]:
    """log p(token_t | source, tokens_<t) in nats for each of ``token_ids`` (one per decoder step,
    forced in order on the KV cache), under the model as it is now (call it inside
    :func:`core.transformer.ablation.ablated` to score under ablation). Stops early, with a
    shorter list, if the output budget ends first. ``should_stop()`` is polled before each step
    (cancellation; raising is the caller's job).

    Raises:
        InputError: empty or unusable ``text`` (as :class:`DecodeSession`).
        Whatever ``should_stop()`` raises.
    """
    s = DecodeSession(ckpt.model, ckpt.src_tokenizer, ckpt.tgt_tokenizer, text, pad_to=pad_to, top_k=1)
    out: list[float] = []
    for tid in token_ids:
        if should_stop is not None:
            should_stop()
        step = s.step(force=tid)
        if step is None:
            break
        out.append(step_logprob(step.logits, tid))
    return out


@dataclass
class AblationReport:
    """An :class:`AblationResult` plus, for each token of the **unablated** output, its log P
    (nats) under the unablated model (``original_logprobs``, from the run's own steps) and under
    the ablated model (``ablated_logprobs``; in teacher forcing the same reference tokens, from
    the ablated run's steps). ``sum(ablated_logprobs)`` is ``result.original_output_logprob``.
    """

    result: AblationResult
    original_logprobs: list[float]
    ablated_logprobs: list[float]

    @property
    def changes(self) -> list[float]:
        """Per token: ablated − unablated log P of the same (unablated) output token, nats."""
        return [b - a for a, b in zip(self.original_logprobs, self.ablated_logprobs)]

    @property
    def total_change(self) -> float:
        """Sum of :attr:`changes`: log P(unablated output) under ablation minus without, nats."""
        return float(sum(self.changes))


def ablation_report(ckpt: Checkpoint, text: str, heads: list[tuple[int, int]], kind: str = "enc", **options) -> AblationReport:
    """:func:`translate_ablated` (same arguments) and the per-token log P of the unablated output
    under both models. ``options["should_stop"]`` is polled at every decoder step of all of it.

    Raises:
        InputError: a head out of range, an unknown kind, or any error of ``translate``.
        Whatever ``should_stop()`` raises.
    """
    result = translate_ablated(ckpt, text, heads, kind, **options)
    original = result.original
    before = [float(s.logprob) if s.logprob is not None else float("nan") for s in original.steps]
    if original.mode == "teacher_forced":
        after = [float(s.logprob) if s.logprob is not None else float("nan") for s in result.ablated.steps]
    else:
        c = ckpt.model.config
        n_layers = c.n_encoder_layers if kind == "enc" else c.n_decoder_layers
        with ablated(ckpt.model, ablation_spec(heads, kind, n_layers, c.n_heads)):
            after = forced_logprobs(
                ckpt, text, [s.token_id for s in original.steps], options.get("pad_to"), options.get("should_stop")
            )
    return AblationReport(result, before[: len(after)], after)


__all__ = ["forced_logprobs", "ablation_report", "AblationReport"]
