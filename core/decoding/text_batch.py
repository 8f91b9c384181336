"""Text only, many sentences: length-sorted batches, greedy or beam, no attention maps kept.

The app path (:func:`core.decoding.translate.translate`) keeps every attention map of every step;
a file of sentences asked for text only needs none of them. Here sentences are sorted by source
length and cut into batches of at most ``batch_size`` sentences and ``max_tokens`` padded source
positions (fairseq's ``--max-tokens``); each batch is encoded once (pad keys masked, True = pad)
and decoded on the KV cache without attention weights (``F.scaled_dot_product_attention``).

- Greedy: one row per sentence; a sentence that ends (EOS or its output budget) leaves the batch
  once a quarter of the rows have ended (its cache rows are dropped, the others go on).
- Beam: ``k`` rows per sentence, every sentence's search exactly as
  :func:`core.decoding.beam.beam_search` runs it alone; a sentence whose search has stopped is
  retired from the batch at once (as CTranslate2 and fairseq do), so the rest decode on fewer rows
  (:mod:`core.decoding.text_beam`).

Results come back in input order, one per input line (a blank line gives an empty translation).
Each output equals the one-sentence path's (tested); only the float rounding of a padded batch
differs, which can change a token only where two candidates tie to within it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from core.decoding.beam import Hypothesis, _start_id, length_penalty
from core.decoding.confidence import NOT_KOREAN, has_hangul, is_low_confidence, mean_logprob, symbols_only
from core.decoding.session import Source, prepare_source
from core.decoding.strategy import DecodingStrategy, as_strategy
from core.decoding.text_beam import beam_hypotheses
from core.decoding.text_encode import _budgets, _source_batch, _step_scores, encode_grouped
from core.errors import InputError
from core.textio import clean_text
from core.transformer.kv_cache import LayerCache
from core.transformer.model import Transformer

DEFAULT_BATCH_SIZE = 32  # sentences per batch
RETIRE_FRACTION = 0.25  # greedy: drop ended rows once they are this share of the batch


@dataclass
class TextResult:
    """One line's text-only result. ``ids``: output ids (EOS excluded); ``logprob``: log P of the
    output in nats (EOS included when it ended with EOS); ``n_tokens``: output tokens counted for
    the confidence (EOS included); ``truncated``: stopped by the output budget without EOS;
    ``notice``: what the app path would report (a source cut, no Hangul, only symbols, unknown
    characters, an output stopped at the length limit); ``error``: why the line was not translated."""

    text: str
    translation: str = ""
    ids: tuple[int, ...] = ()
    logprob: float | None = None
    n_tokens: int = 0
    truncated: bool = False
    notice: str = ""
    error: str = ""

    @property
    def confidence(self) -> float | None:
        """Mean log-probability per output token, EOS included (nats), as the app path's."""
        return mean_logprob(self.logprob, self.n_tokens)

    @property
    def low_confidence(self) -> bool:
        return is_low_confidence(self.confidence)


def length_batches(lengths: list[int], batch_size: int, max_tokens: int | None = None) -> list[list[int]]:
    """Indices into ``lengths`` (source positions per sentence) grouped for decoding: sorted by length
    (stable), each batch at most ``batch_size`` sentences and, with ``max_tokens``, at most that many
    padded positions (sentences × longest length; a single longer sentence still gets its own batch).

    Raises:
        InputError: ``batch_size`` or ``max_tokens`` below 1.
    """
    if batch_size < 1:
        raise InputError(f"--batch-size must be at least 1, got {batch_size}")
    if max_tokens is not None and max_tokens < 1:
        raise InputError(f"--max-tokens must be at least 1, got {max_tokens}")
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    for i in order:
        b = batches[-1] if batches else None
        # sorted ascending: the newcomer is the longest, so the padded size is (n + 1) × its length
        if b is None or len(b) >= batch_size or (max_tokens is not None and (len(b) + 1) * lengths[i] > max_tokens):
            batches.append([i])
        else:
            b.append(i)
    return batches


def greedy_hypotheses(
    model: Transformer,
    sources: list[Source],
    alpha: float = 0.6,
    should_stop=None,
    max_output: int | None = None,
    encoded: tuple[Tensor, Tensor, list[LayerCache] | None] | None = None,
) -> list[Hypothesis]:
    """Greedy decoding of ``sources`` as one batch: per sentence the :class:`Hypothesis` that
    ``beam_search(..., beam=1)`` returns alone (ids without EOS, log P in nats accumulated in float32
    as it does, GNMT score with ``alpha``, ``truncated`` when the output budget ran out).
    ``max_output``: cap every output budget at this many tokens (CTranslate2's ``max_decoding_length``).
    ``encoded``: ``(memory [B, S, D], src_key_padding_mask [B, S], first cache or None)`` of these
    sources as :func:`encode_grouped` gives them (a beam search's own), instead of encoding again."""
    c = model.config
    device = next(model.parameters()).device
    budgets = _budgets(model, sources, max_output)
    result: list[Hypothesis | None] = [None] * len(sources)
    seqs: list[list[int]] = [[] for _ in sources]
    rows = list(range(len(sources)))  # the sentence of each batch row
    live = [True] * len(sources)  # per row: still decoding (ended rows run on until retired)
    with torch.inference_mode():
        if encoded is None:
            src, kpm = _source_batch(model, sources)
            memory, cache = encode_grouped(model, src, kpm)
        else:
            memory, kpm, cache = encoded
        last = torch.full((len(rows), 1), _start_id(c), dtype=torch.long, device=device)
        logps = torch.zeros(len(rows), device=device)
        buffer: Tensor | None = None
        for t in range(max(budgets)):
            if should_stop is not None:
                should_stop()
            # memory: read at the first step only; the logits written into one buffer, reused step by step
            out = model.decode(last, memory, kpm, cache=cache, logits_buffer=buffer)
            if buffer is None:
                buffer = out.logits.new_empty(len(sources), out.logits.size(-1))
            cache = out.cache
            cand = _step_scores(model, out.logits, logps)
            tok = cand.argmax(-1)  # the first of equal maxima: top_candidates' order
            logps = cand.gather(1, tok[:, None])[:, 0]
            for j, (i, k, lp) in enumerate(zip(rows, tok.tolist(), logps.tolist())):
                if not live[j]:
                    continue
                if k == c.eos_id:
                    result[i] = Hypothesis(seqs[i], lp, lp / length_penalty(len(seqs[i]) + 1, alpha))
                    live[j] = False
                    continue
                seqs[i].append(k)
                if t + 1 >= budgets[i]:
                    result[i] = Hypothesis(seqs[i], lp, lp / length_penalty(len(seqs[i]), alpha), truncated=True)
                    live[j] = False
            n_live = sum(live)
            if not n_live:
                break
            if len(rows) - n_live >= max(1, RETIRE_FRACTION * len(rows)):
                keep = [j for j, on in enumerate(live) if on]
                index = torch.tensor(keep, device=device)
                cache = [lc.select(index) for lc in cache]
                kpm, tok, logps = kpm[index], tok[index], logps[index]
                rows, live = [rows[j] for j in keep], [True] * len(keep)
            last = tok[:, None]
    return result  # type: ignore[return-value]


def _notice(source: Source, translation: str, model_output: str, truncated: bool, budget: int) -> tuple[str, str]:
    """``(translation, notice)`` as the app path reports them for a finished output (see
    :func:`core.decoding.translate.session_result`): symbols-only input passed through unchanged,
    no Hangul, unknown characters, an output stopped by the budget; the source cut first."""
    notes = [source.notice] if source.notice else []
    if not has_hangul(source.text):
        notes.append(NOT_KOREAN)
    shown = " ".join(clean_text(source.text).split())
    if symbols_only(shown):
        translation = shown
        notes.append(f"only symbols: passed through unchanged (the model wrote {model_output!r})")
    n_unk = source.tokens.count("[UNK]")
    if n_unk:
        notes.append(f"{n_unk} character(s) unknown to the model are shown as [UNK]")
    if truncated:
        notes.append(f"output stopped at the length limit ({budget} tokens) without [EOS]")
    return translation, "; ".join(notes)


def translate_texts(
    ckpt,
    texts: list[str],
    beam: int | DecodingStrategy = 1,
    batch_size: int = DEFAULT_BATCH_SIZE,
    max_tokens: int | None = None,
    alpha: float = 0.6,
    should_stop=None,
    progress: Callable[[int], None] | None = None,
    max_output: int | None = None,
) -> list[TextResult]:
    """Translate ``texts`` (one sentence each) to text only, greedy or beam, in length-sorted batches
    (:func:`length_batches`); one :class:`TextResult` per text, in input order. A blank text gives an
    empty translation; a text empty after normalization gets ``error`` set and an empty translation.
    ``progress(n)`` is called with the number of sentences of each finished batch. ``max_output``:
    cap every output at this many tokens (EOS included; default the model's own budget, 2·S + 10).

    Raises:
        InputError: a beam size out of range, a sampling strategy (it draws one sentence at a
            time: use :func:`core.decoding.translate.translate`), or a bad ``batch_size`` / ``max_tokens``.
    """
    strategy = as_strategy(beam)
    if strategy.is_sampling:
        raise InputError("sampling translates one sentence at a time; batches are for greedy and beam")
    model, src_tok, tgt_tok = ckpt.model, ckpt.src_tokenizer, ckpt.tgt_tokenizer
    c = model.config
    results = [TextResult(t) for t in texts]
    sources: dict[int, Source] = {}
    for i, t in enumerate(texts):
        if not t.strip():
            continue
        try:
            sources[i] = prepare_source(t, src_tok, c.max_len, c.eos_id, c.pad_id)
        except InputError as exc:
            results[i].error = str(exc)
    todo = list(sources)
    for batch in length_batches([len(sources[i].ids) for i in todo], batch_size, max_tokens):
        idx = [todo[j] for j in batch]
        srcs = [sources[i] for i in idx]
        if strategy.is_greedy:
            hyps = greedy_hypotheses(model, srcs, alpha, should_stop, max_output)
        else:
            hyps = beam_hypotheses(model, srcs, strategy.beam_size, alpha, should_stop=should_stop, max_output=max_output)
        for i, s, h in zip(idx, srcs, hyps):
            text = tgt_tok.decode(h.ids)
            translation, notice = _notice(s, text, text, h.truncated, _budgets(model, [s], max_output)[0])
            n_tokens = len(h.ids) + (0 if h.truncated else 1)
            results[i] = TextResult(texts[i], translation, tuple(h.ids), h.logprob, n_tokens, h.truncated, notice)
        if progress is not None:
            progress(len(idx))
    return results


__all__ = [
    "DEFAULT_BATCH_SIZE",
    "beam_hypotheses",
    "TextResult",
    "greedy_hypotheses",
    "length_batches",
    "translate_texts",
]
