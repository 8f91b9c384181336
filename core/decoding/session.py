"""Step-by-step decoding with a key/value cache, teacher forcing, and batched greedy search.

The data path of one sentence: text → source ids ``[S]`` (optionally padded to N) →
``encode`` once → one decoder position per :meth:`DecodeSession.step` → :class:`AttentionMaps`.
Masks are boolean, **True = masked**.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor

from core.errors import InputError
from core.tokenizers.bpe import BOS, EOS, PAD
from core.tokenizers.protocol import SubwordTokenizer
from core.transformer.layers import LayerCache
from core.transformer.maps import AppliedMasks, AttentionMaps
from core.transformer.masks import causal_mask
from core.transformer.model import Transformer, captured


@dataclass
class Source:
    """A tokenized source sentence: ids ``[S]`` (tokens + EOS + pads), its tokens, the number of
    real (non-pad) positions, and a notice when the input had to be shortened."""

    text: str
    ids: list[int]
    tokens: list[str]
    n_real: int
    notice: str = ""


def prepare_source(text: str, tok: SubwordTokenizer, max_len: int, eos_id: int, pad_id: int, pad_to: int | None = None) -> Source:
    """Tokenize ``text`` for the encoder: BPE tokens + ``[EOS]``, then pads up to ``pad_to``.

    Longer input is cut to ``max_len - 1`` tokens (+ EOS) with a visible notice.
    Raises:
        InputError: the text is empty after normalization, or ``pad_to`` is out of range.
    """
    if not isinstance(text, str):
        raise InputError("source must be text")
    enc = tok.encode(text)
    if not enc.ids:
        raise InputError("nothing to translate: the input is empty after normalization")
    ids, tokens, notice = enc.ids, enc.tokens, ""
    if len(ids) + 1 > max_len:
        notice = f"input has {len(ids)} tokens; only the first {max_len - 1} were translated (max_len {max_len})"
        ids, tokens = ids[: max_len - 1], tokens[: max_len - 1]
    ids, tokens = ids + [eos_id], tokens + [EOS]
    n_real = len(ids)
    if pad_to is not None:
        if pad_to > max_len:
            raise InputError(f"pad-to {pad_to} exceeds the model's max_len {max_len}")
        extra = max(0, pad_to - len(ids))
        ids, tokens = ids + [pad_id] * extra, tokens + [PAD] * extra
    return Source(text, ids, tokens, n_real, notice)


def max_output_steps(n_src: int, max_len: int) -> int:
    """Output budget: 2·S + 10 tokens, never more than ``max_len - 1`` decoder positions."""
    return max(1, min(max_len - 1, 2 * n_src + 10))


def output_budget(n_src: int, max_len: int, n_prefix: int = 0) -> int:
    """The most output positions an output may take when its first ``n_prefix`` are forced.

    The budget of :func:`max_output_steps` counts the tokens the model says *after* the forced
    prefix (max new tokens, as OpenNMT-py and CTranslate2 count it with a target prefix), so a
    long prefix never leaves the model without a word. The model's positions stay a hard cap:
    never more than ``max_len - 1`` in all, prefix included (a longer prefix is cut there).
    """
    return min(max_len - 1, n_prefix + max_output_steps(n_src, max_len))


@dataclass
class Step:
    """One decoding step k: fed decoder input position k, chose ``token_id``.

    top_k: ``[(token, id, probability)]`` highest first. self_attn ``[L, H, k+1]`` is the new
    decoder self-attention row; cross_attn ``[L, H, S]`` the new cross-attention row;
    logits ``[V]`` raw scores for this position. forced: the token was imposed by the user
    (a forked prefix), not chosen by the model or the search. self_mask ``[k+1]`` / cross_mask
    ``[S]``: the mask rows the model was given at this step (bool, True = masked), or None when
    that attention ran unmasked (a single new query on the KV cache gets no causal mask).
    """

    token_id: int
    token: str
    top_k: list[tuple[str, int, float]]
    self_attn: Tensor
    cross_attn: Tensor
    logits: Tensor
    forced: bool = False
    self_mask: Tensor | None = None
    cross_mask: Tensor | None = None


class DecodeSession:
    """Encodes a source once, then advances one target token per :meth:`step` using a KV cache.

    :meth:`back` removes the last step in O(1) (the cache is truncated, nothing recomputed).
    ``force`` lets a caller replay a given sequence (e.g. the best beam) step by step; ``forced``
    marks user-imposed tokens, after which the output budget (:attr:`max_steps`) is counted.
    """

    def __init__(
        self,
        model: Transformer,
        src_tok: SubwordTokenizer,
        tgt_tok: SubwordTokenizer,
        text: str,
        pad_to: int | None = None,
        top_k: int = 5,
    ) -> None:
        self.model, self.tgt_tok, self.top_k = model, tgt_tok, top_k
        c = model.config
        self.source = prepare_source(text, src_tok, c.max_len, c.eos_id, c.pad_id, pad_to)
        self.device = next(model.parameters()).device
        src = torch.tensor([self.source.ids], device=self.device)
        with torch.inference_mode():
            enc = model.encode(src, need_weights=True)
        self.memory = enc.memory  # [1, S, D]
        self.encoder_applied = None if enc.attn_mask is None else enc.attn_mask[0].reshape(-1).cpu()  # [S] or None
        self.src_key_padding_mask = enc.src_key_padding_mask  # [1, S]
        self.encoder_self = torch.stack(captured(enc.self_attn))[:, 0].float().cpu()  # [L, H, S, S]
        self.steps: list[Step] = []
        self._cache: list[LayerCache] | None = None

    @property
    def prefix_len(self) -> int:
        """Length of the forced prefix: the output positions up to and including the last step
        marked ``forced`` (0 when none is). The steps before a forced one belong to the prefix
        too: they are what the forced token continues."""
        for k in range(len(self.steps) - 1, -1, -1):
            if self.steps[k].forced:
                return k + 1
        return 0

    @property
    def max_steps(self) -> int:
        """Output budget: :func:`output_budget`, counted after the forced prefix as it stands.
        A step forced later (a fork) moves the budget on with it."""
        return output_budget(self.source.n_real, self.model.config.max_len, self.prefix_len)

    @property
    def finished(self) -> bool:
        """True once EOS was chosen or the output budget is spent."""
        return bool(self.steps) and (self.steps[-1].token_id == self.model.config.eos_id or len(self.steps) >= self.max_steps)

    @property
    def output_ids(self) -> list[int]:
        return [s.token_id for s in self.steps]

    @property
    def translation(self) -> str:
        return self.tgt_tok.decode(self.output_ids)

    @property
    def truncated(self) -> bool:
        """Finished without EOS (ran out of output budget)."""
        return self.finished and self.steps[-1].token_id != self.model.config.eos_id

    def step(self, force: int | None = None, forced: bool = False) -> Step | None:
        """Decode one position; returns the new :class:`Step`, or None if already finished.

        ``force``: take this token id instead of the argmax (the logits, top-k and maps are still
        the model's own). ``forced``: the token is imposed by the user, part of the forced prefix
        (the step is marked ``forced``); it is taken even where the budget before it is spent,
        since the budget counts from the end of the prefix, but never after EOS and never beyond
        ``max_len - 1`` positions.
        """
        if forced and force is None:
            raise ValueError("a forced step needs the token to force")
        c = self.model.config
        ended = bool(self.steps) and self.steps[-1].token_id == c.eos_id
        if ended or len(self.steps) >= (c.max_len - 1 if forced else self.max_steps):
            return None
        last = self.steps[-1].token_id if self.steps else c.start_id
        x = torch.tensor([[last]], device=self.device)
        with torch.inference_mode():
            out = self.model.decode(x, self.memory, self.src_key_padding_mask, need_weights=True, cache=self._cache)
        self._cache = out.cache
        logits = out.logits[0, -1].float()
        probs = logits.softmax(-1)
        if c.never_output_pad:  # shown and chosen without pad; the logits stay as computed (probs is a new tensor)
            probs[c.pad_id] = 0.0
        top_p, top_i = probs.topk(min(self.top_k, probs.numel()))
        token_id = int(top_i[0]) if force is None else int(force)
        step = Step(
            token_id,
            self.tgt_tok.id_to_token(token_id),
            [(self.tgt_tok.id_to_token(int(i)), int(i), float(p)) for p, i in zip(top_p, top_i)],
            torch.stack([w[0, :, -1] for w in captured(out.self_attn)]).float().cpu(),  # [L, H, t]
            torch.stack([w[0, :, -1] for w in captured(out.cross_attn)]).float().cpu(),  # [L, H, S]
            logits.cpu(),
            self_mask=None if out.self_mask is None else out.self_mask[0, 0, -1].cpu(),  # [t] as given
            cross_mask=None if out.cross_mask is None else out.cross_mask[0].reshape(-1).cpu(),  # [S]
            forced=forced,
        )
        self.steps.append(step)
        return step

    def back(self) -> None:
        """Undo the last step (no-op at the start)."""
        if not self.steps:
            return
        self.steps.pop()
        n = len(self.steps)
        self._cache = [lc.truncate(n) for lc in self._cache] if n and self._cache is not None else None

    def run(self) -> None:
        """Step until finished."""
        while self.step() is not None:
            pass

    def maps(self) -> AttentionMaps:
        """Attention so far: T = number of steps taken = decoder inputs consumed (BOS first)."""
        c = self.model.config
        n = len(self.steps)
        lyr, heads = self.encoder_self.shape[:2]
        s = len(self.source.ids)
        dec = torch.zeros(lyr, heads, n, n)
        cross = torch.zeros(lyr, heads, n, s)
        for k, st in enumerate(self.steps):
            dec[:, :, k, : k + 1] = st.self_attn
            cross[:, :, k] = st.cross_attn
        tgt_ids = [c.start_id] + self.output_ids[: max(n - 1, 0)]
        return AttentionMaps(
            self.encoder_self,
            dec,
            cross,
            self.src_key_padding_mask[0].cpu(),
            torch.zeros(n, dtype=torch.bool),
            causal_mask(n),
            list(self.source.tokens),
            [BOS] + self.tgt_tok.ids_to_tokens(tgt_ids[1:]),
            AppliedMasks.from_rows(
                self.encoder_applied, s, [st.self_mask for st in self.steps], [st.cross_mask for st in self.steps]
            ),
        )


def _pad_column(scores: Tensor, pad_id: int) -> Tensor:
    """Bool ``[1, V]`` with True at ``pad_id``, for ``never_output_pad`` (True = never chosen)."""
    col = torch.zeros(1, scores.size(-1), dtype=torch.bool, device=scores.device)
    col[0, pad_id] = True
    return col


@dataclass
class TeacherForced:
    """One parallel decoder pass over a given target: logits ``[T, V]`` and the full maps."""

    maps: AttentionMaps
    logits: Tensor
    target_ids: list[int] = field(default_factory=list)


def teacher_forced(
    model: Transformer, src: list[int], tgt_in: list[int], src_tokens: list[str], tgt_tokens: list[str]
) -> TeacherForced:
    """The "training view": decoder input ``tgt_in [T]`` (BOS first) in one pass with the causal mask.

    Returns logits ``[T, V]`` and :class:`AttentionMaps` with ``decoder_self [L, H, T, T]``
    and ``cross [L, H, T, S]``.
    """
    device = next(model.parameters()).device
    src_t = torch.tensor([src], device=device)
    tgt_t = torch.tensor([tgt_in], device=device)
    with torch.inference_mode():
        enc = model.encode(src_t, need_weights=True)
        out = model.decode(tgt_t, enc.memory, enc.src_key_padding_mask, need_weights=True)
    t = len(tgt_in)
    maps = AttentionMaps(
        torch.stack(captured(enc.self_attn))[:, 0].float().cpu(),
        torch.stack(captured(out.self_attn))[:, 0].float().cpu(),
        torch.stack(captured(out.cross_attn))[:, 0].float().cpu(),
        enc.src_key_padding_mask[0].cpu(),
        torch.zeros(t, dtype=torch.bool),
        causal_mask(t),
        list(src_tokens),
        list(tgt_tokens),
        AppliedMasks.from_pass(
            None if enc.attn_mask is None else enc.attn_mask[0].reshape(-1),
            len(src),
            t,
            None if out.self_mask is None else out.self_mask[0],
            out.cross_mask,
        ),
    )
    return TeacherForced(maps, out.logits[0].float().cpu())


def greedy_batch(model: Transformer, src_tok: SubwordTokenizer, tgt_tok: SubwordTokenizer, texts: list[str]) -> list[list[int]]:
    """Greedy-decode many sentences at once (padded batch, KV cache); returns output ids per
    sentence without EOS. Used for evaluation; each result equals translating alone.

    Raises:
        InputError: a text is empty after normalization.
    """
    c = model.config
    device = next(model.parameters()).device
    sources = [prepare_source(t, src_tok, c.max_len, c.eos_id, c.pad_id) for t in texts]
    s_len = max(len(s.ids) for s in sources)
    src = torch.full((len(texts), s_len), c.pad_id, dtype=torch.long)
    for i, s in enumerate(sources):
        src[i, : len(s.ids)] = torch.tensor(s.ids)
    src = src.to(device)
    budgets = torch.tensor([max_output_steps(s.n_real, c.max_len) for s in sources], device=device)
    with torch.inference_mode():
        enc = model.encode(src)
        last = torch.full((len(texts), 1), c.start_id, dtype=torch.long, device=device)
        done = torch.zeros(len(texts), dtype=torch.bool, device=device)
        outs, cache = [], None
        for k in range(int(budgets.max())):
            o = model.decode(last, enc.memory, enc.src_key_padding_mask, cache=cache)
            cache = o.cache
            scores = o.logits[:, -1]
            if c.never_output_pad:
                scores = scores.masked_fill(_pad_column(scores, c.pad_id), float("-inf"))
            nxt = scores.argmax(-1)
            nxt = torch.where(done, torch.full_like(nxt, c.pad_id), nxt)
            outs.append(nxt)
            done = done | nxt.eq(c.eos_id) | (k + 1 >= budgets)
            last = nxt[:, None]
            if bool(done.all()):
                break
    ids = torch.stack(outs, 1).tolist()
    result = []
    for row in ids:
        seq = []
        for i in row:
            if i in (c.eos_id, c.pad_id):
                break
            seq.append(i)
        result.append(seq)
    return result
