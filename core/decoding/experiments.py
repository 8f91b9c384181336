"""The lecture experiments on one encoded sentence: forcing tokens, teacher forcing with its loss,
and the causal mask switched off.

Everything here reuses a :class:`~core.decoding.session.DecodeSession`'s encoder output, so a
sentence is encoded exactly once whichever experiment runs. Masks are boolean, **True = masked**.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import torch
from torch import Tensor

from core.decoding.session import DecodeSession, TeacherForced
from core.transformer.maps import AppliedMasks, AttentionMaps
from core.transformer.masks import causal_mask
from core.transformer.model import captured


def fresh_session(session: DecodeSession) -> DecodeSession:
    """A new session on the same source and encoder output (no second encode), with no steps.

    Used to fork a translation or to replay a beam hypothesis without touching ``session``.
    """
    new = copy.copy(session)
    new.steps = []
    new._cache = None
    return new


def step_logprob(logits: Tensor, token_id: int) -> float:
    """Natural-log probability (nats) of ``token_id`` under ``logits [V]`` (softmax over all V)."""
    return float(logits.float().log_softmax(-1)[token_id])


def force_prefix(session: DecodeSession, prefix_ids: list[int]) -> int:
    """Feed ``prefix_ids`` as the next outputs, whatever the model prefers (each step's logits,
    top-k and maps are still the model's own), and mark those steps ``forced``. The output budget
    counts after them (:attr:`DecodeSession.max_steps`), so the model keeps its full budget to
    continue; only the model's ``max_len`` can cut the prefix itself short. Returns the number
    of tokens forced."""
    n = 0
    for tid in prefix_ids:
        if session.step(force=tid, forced=True) is None:
            break
        n += 1
    return n


def teacher_forced_pass(session: DecodeSession, tgt_in: list[int], tgt_tokens: list[str], causal: bool = True) -> TeacherForced:
    """One parallel decoder pass over ``tgt_in [T]`` (start token first) on the session's memory.

    ``causal=False`` removes the causal mask (§3.2.3): every position may attend to the whole
    target, future included (the demonstration of why the mask exists). The returned maps carry
    the causal mask the model applied: ``[T, T]`` True above the diagonal, or all False when off.
    Returns logits ``[T, V]`` (float32, CPU) and :class:`AttentionMaps` with ``decoder_self
    [L, H, T, T]`` and ``cross [L, H, T, S]``.
    Raises:
        ValueError: T exceeds the model's ``max_len``.
    """
    model = session.model
    tgt = torch.tensor([tgt_in], device=session.device)
    with torch.inference_mode():
        out = model.decode(tgt, session.memory, session.src_key_padding_mask, need_weights=True, causal=causal)
    t = len(tgt_in)
    applied = causal_mask(t) if causal else torch.zeros(t, t, dtype=torch.bool)
    maps = AttentionMaps(
        session.encoder_self,
        torch.stack(captured(out.self_attn))[:, 0].float().cpu(),
        torch.stack(captured(out.cross_attn))[:, 0].float().cpu(),
        session.src_key_padding_mask[0].cpu(),
        torch.zeros(t, dtype=torch.bool),
        applied,
        list(session.source.tokens),
        list(tgt_tokens),
        AppliedMasks.from_pass(
            session.encoder_applied,
            len(session.source.ids),
            t,
            None if out.self_mask is None else out.self_mask[0],
            out.cross_mask,
        ),
    )
    return TeacherForced(maps, out.logits[0].float().cpu(), list(tgt_in))


@dataclass
class ReferenceStats:
    """Teacher-forcing numbers for targets ``[T]`` under logits ``[T, V]`` (natural logs, nats).

    ref_logprob: ``[T]`` log p(target_t); ref_prob: ``[T]`` p(target_t) (also outside the top-k);
    argmax: ``[T]`` the model's own most likely id; running_loss: ``[T]`` mean NLL of steps
    0..t; loss: mean NLL over all T (nats/token); perplexity: exp(loss).
    """

    ref_logprob: list[float]
    ref_prob: list[float]
    argmax: list[int]
    running_loss: list[float]
    loss: float
    perplexity: float


def reference_stats(logits: Tensor, targets: list[int], exclude: int | None = None) -> ReferenceStats:
    """Loss and per-step numbers of a teacher-forced pass: logits ``[T, V]``, ``targets`` ``[T]``.

    The loss is the training loss without label smoothing: mean over t of −log softmax(logits_t)
    [target_t] (paper §5.4 trains with ε_ls = 0.1; the unsmoothed NLL is what perplexity means).
    ``exclude``: an id never counted as the model's argmax (``pad_id`` for models that never
    output it); the log-probabilities stay the model's own.
    """
    logp = logits.float().log_softmax(-1)
    tgt = torch.tensor(targets, dtype=torch.long)
    ref = logp.gather(1, tgt[:, None])[:, 0]
    ranked = logp.clone()
    if exclude is not None:
        ranked[:, exclude] = float("-inf")
    nll = -ref
    running = nll.cumsum(0) / torch.arange(1, len(targets) + 1)
    loss = float(nll.mean())
    return ReferenceStats(ref.tolist(), ref.exp().tolist(), ranked.argmax(-1).tolist(), running.tolist(), loss, math.exp(loss))


__all__ = ["fresh_session", "force_prefix", "teacher_forced_pass", "reference_stats", "ReferenceStats", "step_logprob"]
