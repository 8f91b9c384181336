"""Beam search of many sentences in one batch, text only (what ``translate -`` and ``evaluate`` run).

Rows: ``k`` per live sentence, consecutive, reordered by their parents each step; every sentence's
search exactly as :func:`core.decoding.beam.beam_search` runs it alone (top 2k candidates, EOS
finishes only in the top k, the same exact stopping rule, the greedy hypothesis competing, the same
tie-breaking). A sentence whose search has stopped leaves the batch at once (as CTranslate2 and
fairseq do). The work per step is kept to what the search needs:

- the cross-attention keys and values stay one copy per sentence: a sentence's k rows attend to them
  as k queries of one attention (:meth:`~core.transformer.layers.DecoderLayer.cross_attention`),
  instead of k copies read k times (where the rows per sentence differ, they are copied per row);
- the self-attention cache is reordered by one gather of its storage (:meth:`LayerCache.reorder`);
- the greedy hypothesis rides along: while its prefix is one of the beam's rows, its next token is
  that row's argmax (no extra row); only once it falls out of the beam does it get a row of its own,
  after the beam's rows in the same decoder call (its cross-attention keys its own: ``shared`` of
  :class:`LayerCache`), so the greedy search costs nothing while it agrees with the beam and one
  row, not a second call, after that. A
  greedy prefix still in the beam when the search stops cannot beat the best finished hypothesis
  (the stopping rule bounds every extension of a live prefix), so it is not followed further.
"""

from __future__ import annotations

from itertools import accumulate

import torch
from torch import Tensor

from core.decoding.beam import Hypothesis, _start_id, length_penalty, top_candidates
from core.decoding.session import Source
from core.decoding.text_encode import _budgets, _source_batch, _step_scores, encode_grouped
from core.transformer.model import Transformer


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


class _Greedy:
    """The greedy hypotheses of a batched beam search: per sentence ``row`` (its prefix's row within
    the sentence's block while the prefix is one of the beam's, else None), and, for those that
    fell out of the beam, rows of their own (``side``, in row order after the beam's rows of the
    same decoder call), with their log P so far and last token."""

    def __init__(self, n: int, alpha: float) -> None:
        self.alpha = alpha
        self.row: list[int | None] = [0] * n  # the first step: the sentence's only row
        self.seq: list[list[int]] = [[] for _ in range(n)]
        self.result: list[Hypothesis | None] = [None] * n
        self.side: list[int] = []  # sentences with a row of their own, in row order
        self.side_lp: list[float] = []
        self.side_tok: list[int] = []
        self.pending: list[tuple[int, int]] = []  # (beam row, active sentence) of this step's split-offs

    def extend(self, i: int, tok: int, lp: float, eos: int, budget_spent: bool) -> bool:
        """Sentence ``i``'s greedy prefix gets ``tok`` (log P so far ``lp``); True while it goes on."""
        self.row[i] = None
        if tok == eos:
            s = self.seq[i]
            self.result[i] = Hypothesis(s, lp, lp / length_penalty(len(s) + 1, self.alpha))
            return False
        self.seq[i] = s = self.seq[i] + [tok]
        if budget_spent:
            self.result[i] = Hypothesis(s, lp, lp / length_penalty(len(s), self.alpha), truncated=True)
            return False
        return True

    def split_off(self, i: int, tok: int, lp: float, row: int, a: int) -> None:
        """Sentence ``i``'s greedy prefix left the beam: from the next step on a row of its own, made
        from the beam's ``row`` (self-attention keys of its prefix) and the cross-attention keys of
        the step's active sentence ``a``."""
        self.pending.append((row, a))
        self.side.append(i)
        self.side_lp.append(lp)
        self.side_tok.append(tok)

    def step(self, cand: Tensor, eos: int, budgets: list[int], t: int) -> list[int]:
        """One greedy step of the rows of their own from their scores ``cand [N_side, V]``; returns
        the indices of the rows that go on (the others have their result)."""
        tok = cand.argmax(-1)  # the first of equal maxima: top_candidates' order
        toks, lps = tok.tolist(), cand.gather(1, tok[:, None])[:, 0].tolist()
        keep = [j for j, i in enumerate(self.side) if self.extend(i, toks[j], lps[j], eos, t + 1 >= budgets[i])]
        self.side = [self.side[j] for j in keep]
        self.side_lp = [lps[j] for j in keep]
        self.side_tok = [toks[j] for j in keep]
        return keep


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
    alone (see the module for how the batch runs). ``max_output``: cap every output budget at this
    many tokens (CTranslate2's ``max_decoding_length``). ``should_stop()`` is polled each step."""
    c = model.config
    device = next(model.parameters()).device
    src, kpm_src = _source_batch(model, sources)
    budgets = _budgets(model, sources, max_output)
    n_cand = 1 if beam == 1 else 2 * beam
    finished: list[list[Hypothesis]] = [[] for _ in sources]
    truncated: list[list[Hypothesis]] = [[] for _ in sources]
    active = list(range(len(sources)))  # sentences still searching, in row-block order
    seqs: dict[int, list[list[int]]] = {i: [[]] for i in active}
    greedy = _Greedy(len(sources), alpha) if keep_greedy and beam > 1 else None
    with torch.inference_mode():
        memory, cache = encode_grouped(model, src, kpm_src)
        # per layer the cross-attention keys and values [B_active + N_side, H, S, d_head] of the active
        # sentences (one copy each), then of the greedy rows of their own; kpm_all: their source pad (True = pad)
        cross_all = None if cache is None else [(lc.cross_k, lc.cross_v) for lc in cache]
        kpm = kpm_all = kpm_src  # kpm: what the decoder gets (per source of the step's cross keys)
        last = torch.full((len(active), 1), _start_id(c), dtype=torch.long, device=device)
        logps = torch.zeros(len(active), device=device)
        n_rows = [1] * len(active)
        buffer: Tensor | None = None
        for t in range(max(budgets)):
            if should_stop is not None:
                should_stop()
            n_side = 0 if greedy is None else len(greedy.side)
            if not active and not n_side:
                break
            # memory: read at the first step only; the logits written into one buffer, reused step by step
            out = model.decode(last, memory, kpm, cache=cache, logits_buffer=buffer)
            if buffer is None:  # rows at most: k per sentence and a greedy row of its own each
                buffer = out.logits.new_empty(len(sources) * (beam + 1), out.logits.size(-1))
            if cross_all is None:  # the first step projected them (one row per sentence)
                cross_all = [(lc.cross_k, lc.cross_v) for lc in out.cache]
            cand = _step_scores(model, out.logits, logps)  # beam rows, then the greedy rows of their own
            n_beam = sum(n_rows)
            keep_side = [] if greedy is None or not n_side else greedy.step(cand[n_beam:], c.eos_id, budgets, t)
            v = cand.size(1)
            ranked = _ranked_candidates(cand[:n_beam], n_rows, n_cand) if active else []
            g_rows = [] if greedy is None else [(a, i) for a, i in enumerate(active) if greedy.row[i] is not None]
            g_start = [0, *accumulate(n_rows)]
            if g_rows:  # the greedy prefixes still in the beam: their rows' best continuation
                rows = torch.tensor([g_start[a] + greedy.row[i] for a, i in g_rows], device=device)  # type: ignore[union-attr,operator]
                g_cand = cand.index_select(0, rows)
                g_tok = g_cand.argmax(-1)
                g_next = dict(zip((i for _, i in g_rows), zip(g_tok.tolist(), g_cand.gather(1, g_tok[:, None])[:, 0].tolist())))
            next_active, parents, next_last, next_lp, keep_src = [], [], [], [], []
            start = 0
            for a, (i, n, cands) in enumerate(zip(active, n_rows, ranked)):
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
                stop = not new_seqs or t + 1 >= budgets[i]
                if new_seqs and t + 1 >= budgets[i]:  # output budget spent: live hypotheses end truncated
                    truncated[i] = [
                        Hypothesis(s, lp, lp / length_penalty(len(s), alpha), truncated=True) for s, lp in zip(new_seqs, new_lp)
                    ]
                if new_seqs and not stop and finished[i]:  # n_best = 1: the best finished against the best the live can reach
                    kth = max(h.score for h in finished[i])
                    bound = max(new_lp) / max(length_penalty(t + 2, alpha), length_penalty(budgets[i], alpha))
                    stop = kth >= bound
                g_row = None if greedy is None else greedy.row[i]
                if greedy is not None and g_row is not None:
                    tok, lp = g_next[i]
                    if greedy.extend(i, tok, lp, c.eos_id, t + 1 >= budgets[i]):
                        prefix = greedy.seq[i]
                        j = next((j for j, s in enumerate(new_seqs) if new_par[j] == start + g_row and s == prefix), None)
                        if j is None:  # fell out of the beam: a row of its own
                            greedy.split_off(i, tok, lp, start + g_row, a)
                        elif not stop:
                            greedy.row[i] = j
                        # (still in the beam when the search stops: bounded by the stopping rule, see the module)
                start += n
                if stop:
                    continue
                seqs[i] = new_seqs
                next_active.append(i)
                keep_src.append(a)
                parents += new_par
                next_last += [s[-1] for s in new_seqs]
                next_lp += new_lp
            # the next step's rows: the beam's, then the greedy rows of their own that go on, then the new ones
            pending = [] if greedy is None else greedy.pending
            side_rows = [n_beam + j for j in keep_side] + [row for row, _ in pending]
            if not next_active and not side_rows:
                break
            n_src = len(active)
            if next_active != active or len(keep_side) != n_side or pending:  # the sources changed: one gather
                src_index = torch.tensor(keep_src + [n_src + j for j in keep_side] + [a for _, a in pending], device=device)
                cross_all = [(k.index_select(0, src_index), v_.index_select(0, src_index)) for k, v_ in cross_all]
                kpm_all = kpm_all[src_index]
            if greedy is not None:
                greedy.pending = []
            active = next_active
            n_rows = [len(seqs[i]) for i in active]
            cross, kpm, shared = cross_all, kpm_all, None
            if len(set(n_rows)) > 1:  # rows per sentence differ: the keys copied per row for this step
                counts = torch.tensor(n_rows + [1] * len(side_rows), device=device)
                row_src = torch.repeat_interleave(torch.arange(len(counts), device=device), counts)
                cross = [(k.index_select(0, row_src), v_.index_select(0, row_src)) for k, v_ in cross_all]
                kpm = kpm_all[row_src]
            elif active and side_rows and n_rows[0] > 1:  # r rows per sentence, then one per greedy row
                shared = (len(active), n_rows[0])
            index = torch.tensor(parents + side_rows, device=device)
            cache = [lc.reorder(index, k, v_, shared) for lc, (k, v_) in zip(out.cache, cross)]
            side_tok = [] if greedy is None else greedy.side_tok
            side_lp = [] if greedy is None else greedy.side_lp
            last = torch.tensor(next_last + side_tok, device=device)[:, None]
            logps = torch.tensor(next_lp + side_lp, device=device)
    best = []
    for i, (fin, trunc) in enumerate(zip(finished, truncated)):
        g = greedy.result[i] if greedy is not None else None
        ranked_h = sorted(fin + ([g] if g is not None else []) + trunc, key=lambda h: -h.score)  # stable, as beam_search
        best.append(ranked_h[0])
    return best


__all__ = ["beam_hypotheses"]
