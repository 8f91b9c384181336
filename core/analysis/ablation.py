"""Translate with chosen heads ablated, side by side with the unablated run.

Heads are given as ``"2:3,3:1"``: **1-based** ``layer:head`` pairs of one attention kind
(``enc`` encoder self-attention, ``dec`` decoder masked self-attention, ``cross``
cross-attention). Ablating a head zeroes its output before W^O
(:func:`core.transformer.ablation.ablated`); its attention weights are still computed and shown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.checkpoints.checkpoint import Checkpoint
from core.decoding.experiments import step_logprob
from core.decoding.session import DecodeSession
from core.decoding.translate import Translation, translate
from core.errors import InputError
from core.transformer.ablation import KINDS, ablated

_PAIR = re.compile(r"^\s*(\d+)\s*:\s*(\d+)\s*$")


def parse_heads(text: str) -> list[tuple[int, int]]:
    """``"2:3,3:1"`` → ``[(2, 3), (3, 1)]`` (1-based, as typed; duplicates dropped, order kept).

    Raises:
        InputError: empty, or an item that is not ``layer:head`` with positive integers.
    """
    out: list[tuple[int, int]] = []
    items = text.split(",")
    if not text.strip():
        raise InputError("--ablate needs at least one layer:head pair, e.g. 2:3,3:1")
    for item in items:
        m = _PAIR.match(item)
        if not m or int(m.group(1)) < 1 or int(m.group(2)) < 1:
            raise InputError(f"--ablate item {item.strip()!r} is not layer:head with 1-based numbers, e.g. 2:3")
        pair = (int(m.group(1)), int(m.group(2)))
        if pair not in out:
            out.append(pair)
    return out


def ablation_spec(pairs: list[tuple[int, int]], kind: str, n_layers: int, n_heads: int) -> list[tuple[str, int, int]]:
    """1-based ``(layer, head)`` pairs → 0-based ``(kind, layer, head)`` spec, range-checked.

    Raises:
        InputError: unknown kind, or a layer/head outside ``1..n_layers`` / ``1..n_heads``.
    """
    if kind not in KINDS:
        raise InputError(f"unknown attention kind {kind!r}; expected one of {', '.join(KINDS)}")
    for layer, head in pairs:
        if not 1 <= layer <= n_layers:
            raise InputError(f"--ablate {layer}:{head}: layer {layer} out of range 1..{n_layers} ({kind})")
        if not 1 <= head <= n_heads:
            raise InputError(f"--ablate {layer}:{head}: head {head} out of range 1..{n_heads}")
    return [(kind, layer - 1, head - 1) for layer, head in pairs]


@dataclass
class AblationResult:
    """The ablated and the unablated run of one sentence.

    ablated / original: the two :class:`Translation` s (same options). original_output_logprob:
    log P(the unablated output | source) under the **ablated** model, in nats (teacher forcing:
    the reference's log P, the same tokens in both runs).
    """

    kind: str
    heads: list[tuple[int, int]]  # 1-based
    ablated: Translation
    original: Translation
    original_output_logprob: float | None

    def to_json(self) -> dict:
        """The ablated run's JSON plus ``ablation`` (the heads echoed, 1-based) and ``unablated``."""
        a, o = self.ablated, self.original

        def r(x):
            return None if x is None else round(x, 6)

        delta = None if a.logprob is None or o.logprob is None else a.logprob - o.logprob
        d_same = None if self.original_output_logprob is None or o.logprob is None else self.original_output_logprob - o.logprob
        return a.to_json() | {
            "ablation": {
                "kind": self.kind,
                "heads": [[la, h] for la, h in self.heads],
                "spec": ",".join(f"{la}:{h}" for la, h in self.heads),
            },
            "unablated": {"translation": o.translation, "logprob": r(o.logprob), "tokens": [s.token for s in o.steps]},
            "logprob_change": r(delta),
            "unablated_output_logprob_ablated": r(self.original_output_logprob),
            "unablated_output_logprob_change": r(d_same),
        }


def translate_ablated(ckpt: Checkpoint, text: str, heads: list[tuple[int, int]], kind: str = "enc", **options) -> AblationResult:
    """Translate ``text`` twice, unablated and with ``heads`` (1-based layer:head of ``kind``)
    ablated, with the same :func:`~core.decoding.translate.translate` ``options``; also scores
    the unablated output under the ablated model (forced token by token on the KV cache).

    ``logprob_change`` in the JSON is log P(ablated output) under the ablated model minus
    log P(unablated output) under the unablated model (nats); ``unablated_output_logprob_change``
    compares the same unablated output under both models. ``options["should_stop"]`` (see
    ``translate``) is also polled before each forced step of that scoring, so a cancellation
    stops the whole run at its next decoder step.

    Raises:
        InputError: a head out of range, an unknown kind, or any error of ``translate``.
        Whatever ``should_stop()`` raises.
    """
    c = ckpt.model.config
    n_layers = c.n_encoder_layers if kind == "enc" else c.n_decoder_layers
    spec = ablation_spec(heads, kind, n_layers, c.n_heads)
    original = translate(ckpt, text, **options)
    with ablated(ckpt.model, spec):
        result = translate(ckpt, text, **options)
        if original.mode == "teacher_forced":
            same = result.logprob
        else:
            s = DecodeSession(ckpt.model, ckpt.src_tokenizer, ckpt.tgt_tokenizer, text, pad_to=options.get("pad_to"), top_k=1)
            same = 0.0
            stop = options.get("should_stop")
            for st in original.steps:
                if stop is not None:
                    stop()
                step = s.step(force=st.token_id)
                if step is None:
                    break
                same += step_logprob(step.logits, st.token_id)
    return AblationResult(kind, heads, result, original, same)


__all__ = ["parse_heads", "ablation_spec", "translate_ablated", "AblationResult"]
