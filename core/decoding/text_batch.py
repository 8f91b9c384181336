"""Text only, many sentences: length-sorted batches, greedy or beam, no attention maps kept.

The app path (:func:`core.decoding.translate.translate`) keeps every attention map of every step;
a file of sentences asked for text only needs none of them. Here sentences are sorted by source
length and cut into batches of at most ``batch_size`` sentences and ``max_tokens`` padded source
positions (fairseq's ``--max-tokens``); each batch is encoded once (pad keys masked, True = pad)
and decoded on the KV cache without attention weights (``F.scaled_dot_product_attention``).

- Greedy: one row per sentence; a sentence that ends (EOS or its output budget) leaves the batch
  once a quarter of the rows have ended (its cache rows are dropped, the others go on).
- Beam: ``k`` rows per sentence, every sentence's search exactly as
  :func:`core.decoding.beam.beam_search` runs it alone (top 2k candidates, EOS finishes only in
  the top k, the same exact stopping rule, the greedy hypothesis competing, the same tie-breaking);
  a sentence whose search has stopped is retired from the batch at once (as CTranslate2 and
  fairseq do), so the rest decode on fewer rows.

Results come back in input order, one per input line (a blank line gives an empty translation).
Each output equals the one-sentence path's (tested); only the float rounding of a padded batch
differs, which can change a token only where two candidates tie to within it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import torch
from torch import Tensor

from core.decoding.beam import Hypothesis, _start_id, length_penalty, top_candidates
from core.decoding.confidence import NOT_KOREAN, has_hangul, is_low_confidence, mean_logprob, symbols_only
from core.decoding.session import Source, max_output_steps, prepare_source
from core.decoding.strategy import DecodingStrategy, as_strategy
from core.errors import InputError
from core.textio import clean_text
from core.transformer.kv_cache import LayerCache
from core.transformer.layers import DecoderLayer
from core.transformer.model import Transformer

DEFAULT_BATCH_SIZE = 32  # sentences per batch
RETIRE_FRACTION = 0.25  # greedy: drop ended rows once they are this share of the batch
PAD_WASTE = 0.1  # encoder groups: padded positions at most this share of the real ones


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


def _source_batch(model: Transformer, sources: list[Source]) -> tuple[Tensor, Tensor]:
    """``src [B, S]`` padded with ``pad_id`` and ``src_key_padding_mask [B, S]`` (True = pad)."""
    c = model.config
    device = next(model.parameters()).device
    s_len = max(len(s.ids) for s in sources)
    src = torch.full((len(sources), s_len), c.pad_id, dtype=torch.long)
    kpm = torch.ones(len(sources), s_len, dtype=torch.bool)
    for i, s in enumerate(sources):
        src[i, : len(s.ids)] = torch.tensor(s.ids)
        kpm[i, : len(s.ids)] = False
    return src.to(device), kpm.to(device)


def length_groups(lengths: list[int], waste: float = PAD_WASTE) -> list[list[int]]:
    """Indices into ``lengths`` in groups of similar length (sorted, stable): a group grows while its
    padded size (members × longest) stays within ``1 + waste`` times its real positions."""
    groups: list[list[int]] = []
    real = 0
    for i in sorted(range(len(lengths)), key=lambda i: lengths[i]):
        g = groups[-1] if groups else None
        if g is not None and (len(g) + 1) * lengths[i] <= (1 + waste) * (real + lengths[i]):
            g.append(i)
            real += lengths[i]
        else:
            groups.append([i])
            real = lengths[i]
    return groups


def encode_grouped(model: Transformer, src: Tensor, src_key_padding_mask: Tensor) -> tuple[Tensor, list[LayerCache] | None]:
    """The encoder output ``memory [B, S, D]`` of ``src [B, S]`` (``src_key_padding_mask [B, S]``, True =
    pad), with the sentences encoded in groups of similar length (:func:`length_groups`) so that the
    matrix products run on few pad positions (CTranslate2 removes padding for the same reason), and,
    when there is more than one group, the decoder's first cache: per layer the cross-attention keys
    and values ``[B, H, S, d_head]`` projected group by group, no target position yet (else None: the
    first decoder step projects them). Pad positions of the memory, keys and values are 0; every
    attention to them is masked."""
    lengths = (~src_key_padding_mask).sum(1).tolist()
    groups = length_groups(lengths)
    if len(groups) == 1:
        return model.encode(src, src_key_padding_mask).memory, None
    b, s_len = src.shape
    memory: Tensor | None = None
    cross: list[tuple[Tensor, Tensor]] = []
    for g in groups:
        s_g = max(lengths[i] for i in g)
        index = torch.tensor(g, device=src.device)
        m = model.encode(src[index, :s_g], src_key_padding_mask[index, :s_g]).memory
        if memory is None:
            memory = m.new_zeros(b, s_len, m.size(-1))
        memory[index, :s_g] = m
        for layer_no, layer in enumerate(model.decoder_layers):
            k, v = cast(DecoderLayer, layer).cross_attn.project_kv(m)  # [n_g, H, s_g, d_head]
            if len(cross) <= layer_no:
                cross.append((k.new_zeros(b, k.size(1), s_len, k.size(3)), v.new_zeros(b, v.size(1), s_len, v.size(3))))
            cross[layer_no][0][index, :, :s_g] = k
            cross[layer_no][1][index, :, :s_g] = v
    cache = [LayerCache(ck[:, :, :0], cv[:, :, :0], ck, cv) for ck, cv in cross]
    assert memory is not None  # (at least one group)
    return memory, cache


def _budgets(model: Transformer, sources: list[Source], max_output: int | None) -> list[int]:
    """Each sentence's output budget (:func:`max_output_steps`), capped at ``max_output`` tokens when given."""
    c = model.config
    return [min(max_output_steps(s.n_real, c.max_len), max_output or c.max_len) for s in sources]


def _step_scores(model: Transformer, out_logits: Tensor, logps: Tensor) -> Tensor:
    """``logps[:, None] + log_softmax(logits)`` ``[N, V]`` in float32, pad excluded where the model
    never outputs it: the candidates' scores exactly as :func:`beam_search` computes them."""
    cand = logps[:, None] + out_logits[:, -1].float().log_softmax(-1)
    if getattr(model.config, "never_output_pad", False):
        cand[:, model.config.pad_id] = float("-inf")
    return cand


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
        for t in range(max(budgets)):
            if should_stop is not None:
                should_stop()
            out = model.decode(last, memory, kpm, cache=cache)  # memory: read at the first step only
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


def _ranked_candidates(cand: Tensor, n_rows: list[int], n_cand: int) -> list[list[tuple[float, int]]]:
    """Per sentence, the ``n_cand`` best of its rows' scores ``[n_i, V]`` (consecutive blocks of
    ``cand [N, V]``) as ``(score, flat index within the block)``, ordered as :func:`top_candidates`
    orders them. One batched top-k when every sentence has as many rows; a sentence with two equal
    scores among its top ``n_cand + 1`` is ranked by :func:`top_candidates` itself (exact ties)."""
    v = cand.size(1)
    if len(set(n_rows)) == 1 and n_rows[0] * v > n_cand:
        blocks = cand.view(len(n_rows), n_rows[0] * v)
        vals, idx = blocks.topk(n_cand + 1, dim=1)
        ties = (vals[:, 1:] == vals[:, :-1]).any(dim=1).tolist()
        vals_l, idx_l = vals[:, :n_cand].tolist(), idx[:, :n_cand].tolist()
        return [
            top_candidates(blocks[i].view(n_rows[0], v), n_cand) if ties[i] else list(zip(vals_l[i], idx_l[i]))
            for i in range(len(n_rows))
        ]
    out, start = [], 0
    for n in n_rows:
        out.append(top_candidates(cand[start : start + n], n_cand))
        start += n
    return out


def beam_hypotheses(
    model: Transformer,
    sources: list[Source],
    beam: int,
    alpha: float = 0.6,
    keep_greedy: bool = True,
    should_stop=None,
    max_output: int | None = None,
) -> list[Hypothesis]:
    """Beam search of every sentence of ``sources`` in one batch: per sentence the best
    :class:`Hypothesis` that :func:`core.decoding.beam.beam_search` (``n_best=1``) returns for it
    alone. Rows: ``beam`` per live sentence, reordered by their parents each step; a sentence
    whose search has stopped (its stopping rule, or the output budget) leaves the batch.
    ``max_output``: as for :func:`greedy_hypotheses`."""
    c = model.config
    device = next(model.parameters()).device
    src, kpm_src = _source_batch(model, sources)
    budgets = _budgets(model, sources, max_output)
    n_cand = 1 if beam == 1 else 2 * beam
    finished: list[list[Hypothesis]] = [[] for _ in sources]
    truncated: list[list[Hypothesis]] = [[] for _ in sources]
    active = list(range(len(sources)))  # sentences still searching, in row-block order
    seqs: dict[int, list[list[int]]] = {i: [[]] for i in active}
    with torch.inference_mode():
        (memory, cache), kpm = encode_grouped(model, src, kpm_src), kpm_src
        encoded = (memory, kpm_src, cache)  # for the greedy hypothesis: the same encoder output
        last = torch.full((len(active), 1), _start_id(c), dtype=torch.long, device=device)
        logps = torch.zeros(len(active), device=device)
        for t in range(max(budgets)):
            if should_stop is not None:
                should_stop()
            out = model.decode(last, memory, kpm, cache=cache)  # memory: read at the first step only
            cand = _step_scores(model, out.logits, logps)
            v = cand.size(1)
            n_rows = [len(seqs[i]) for i in active]
            ranked = _ranked_candidates(cand, n_rows, n_cand)
            next_active, parents, next_last, next_lp = [], [], [], []
            start = 0
            for i, n, cands in zip(active, n_rows, ranked):
                new_seqs: list[list[int]] = []
                new_lp: list[float] = []
                new_par: list[int] = []
                for rank, (lp, flat) in enumerate(cands):
                    if lp == float("-inf"):  # only excluded candidates are left
                        break
                    parent, tok = divmod(flat, v)
                    if tok == c.eos_id:
                        if rank < beam:
                            s = seqs[i][parent]
                            finished[i].append(Hypothesis(s, lp, lp / length_penalty(len(s) + 1, alpha)))
                    elif len(new_seqs) < beam:
                        new_seqs.append(seqs[i][parent] + [tok])
                        new_lp.append(lp)
                        new_par.append(start + parent)
                start += n
                if not new_seqs:
                    continue
                if t + 1 >= budgets[i]:  # output budget spent: live hypotheses end truncated
                    truncated[i] = [
                        Hypothesis(s, lp, lp / length_penalty(len(s), alpha), truncated=True) for s, lp in zip(new_seqs, new_lp)
                    ]
                    continue
                if finished[i]:  # n_best = 1: the best finished score against the best the live can reach
                    kth = max(h.score for h in finished[i])
                    bound = max(new_lp) / max(length_penalty(t + 2, alpha), length_penalty(budgets[i], alpha))
                    if kth >= bound:
                        continue
                seqs[i] = new_seqs
                next_active.append(i)
                parents += new_par
                next_last += [s[-1] for s in new_seqs]
                next_lp += new_lp
            if not next_active:
                break
            index = torch.tensor(parents, device=device)
            if next_active == active and all(len(seqs[i]) == n for i, n in zip(active, n_rows)):
                # same sentences, same rows each: a row's parent is a row of its own sentence, whose
                # cross-attention keys and values (the memory's projections) are the same, so only the
                # self-attention keys and values are reordered
                cache = [LayerCache(lc.self_k[index], lc.self_v[index], lc.cross_k, lc.cross_v) for lc in out.cache]
            else:
                cache = [lc.select(index) for lc in out.cache]
                kpm = kpm[index]
            active = next_active
            last = torch.tensor(next_last, device=device)[:, None]
            logps = torch.tensor(next_lp, device=device)
    greedy: list[Hypothesis | None] = [None] * len(sources)
    if keep_greedy and beam > 1:
        greedy = list(greedy_hypotheses(model, sources, alpha, should_stop, max_output, encoded))
    best = []
    for fin, trunc, g in zip(finished, truncated, greedy):
        ranked_h = sorted(fin + ([g] if g is not None else []) + trunc, key=lambda h: -h.score)  # stable, as beam_search
        best.append(ranked_h[0])
    return best


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
    "TextResult",
    "beam_hypotheses",
    "greedy_hypotheses",
    "length_batches",
    "translate_texts",
]
