"""Several sentences as one padded batch: padding on both sides, visible.

One encoder pass over the source batch ``[B, S]`` (shorter sentences padded, source key padding
mask True at their pads), then greedy decoding of all rows together on the KV cache. A row that has
produced EOS is fed ``[PAD]`` from the next step on, and the target key padding mask ``[B, T]``
marks those positions True, so the other rows keep decoding while its pad keys are masked.
Each row's result carries the very mask tensors the model applied (True = masked).
"""

from __future__ import annotations

import torch

from core.checkpoints.checkpoint import Checkpoint
from core.decoding.confidence import NOT_KOREAN, has_hangul
from core.decoding.experiments import step_logprob
from core.decoding.session import Source, max_output_steps, prepare_source
from core.decoding.translate import StepInfo, Translation, check_finite, with_texts
from core.errors import InputError
from core.tokenizers.bpe import BOS, PAD
from core.transformer.maps import AppliedMasks, AttentionMaps
from core.transformer.masks import causal_mask
from core.transformer.model import captured


def translate_batch(ckpt: Checkpoint, texts: list[str], top_k: int = 5, should_stop=None) -> list[Translation]:
    """Greedy-translate ``texts`` (B ≥ 1) as one padded batch; one :class:`Translation` per text.

    Each result's maps have the batch's shapes: ``encoder_self [L, H, S, S]``, ``decoder_self
    [L, H, T, T]``, ``cross [L, H, T, S]`` with S, T the longest source and output of the batch;
    ``src_key_padding_mask [S]`` and ``tgt_key_padding_mask [T]`` are that row of the masks the
    model applied. Pad *columns* are exactly 0 because they are masked; pad *rows* (queries at pad
    positions, whose outputs are never used) are set to exactly 0. ``steps`` lists only the row's
    real steps (up to and including its EOS); the translation equals translating the sentence
    alone (tested). ``should_stop()`` is polled between steps.

    Raises:
        InputError: no texts, a text empty after normalization, or ``top_k < 1``.
    """
    if not texts:
        raise InputError("nothing to translate: no sentences")
    if top_k < 1:
        raise InputError("top-k must be at least 1")
    model, tgt_tok = ckpt.model, ckpt.tgt_tokenizer
    c = model.config
    device = next(model.parameters()).device
    sources = [prepare_source(t, ckpt.src_tokenizer, c.max_len, c.eos_id, c.pad_id) for t in texts]
    b, s_len = len(texts), max(len(s.ids) for s in sources)
    src = torch.full((b, s_len), c.pad_id, dtype=torch.long)
    src_kpm = torch.ones(b, s_len, dtype=torch.bool)  # True = pad key
    for i, s in enumerate(sources):
        src[i, : len(s.ids)] = torch.tensor(s.ids)
        src_kpm[i, : len(s.ids)] = False
    src, src_kpm = src.to(device), src_kpm.to(device)
    budgets = [max_output_steps(s.n_real, c.max_len) for s in sources]
    outputs: list[list[int]] = [[] for _ in texts]
    steps: list[list[StepInfo]] = [[] for _ in texts]
    self_rows, cross_rows = [], []
    self_masks, cross_masks = [], []  # per step, the masks given to attention ([B, 1, 1, k+1], [B, 1, 1, S]) or None
    done = [False] * b
    with torch.inference_mode():
        enc = model.encode(src, src_kpm, need_weights=True)
        cache, tgt_kpm = None, torch.zeros(b, 0, dtype=torch.bool, device=device)
        for _ in range(max(budgets)):
            if should_stop is not None:
                should_stop()
            last = [c.pad_id if done[i] else (outputs[i][-1] if outputs[i] else c.start_id) for i in range(b)]
            tgt_kpm = torch.cat([tgt_kpm, torch.tensor(done, device=device)[:, None]], dim=1)  # [B, k + 1]
            out = model.decode(
                torch.tensor(last, device=device)[:, None], enc.memory, src_kpm, tgt_kpm, need_weights=True, cache=cache
            )
            cache = out.cache
            self_masks.append(out.self_mask)
            cross_masks.append(out.cross_mask)
            self_rows.append(torch.stack([w[:, :, -1] for w in captured(out.self_attn)], 1).float().cpu())  # [B, L, H, k+1]
            cross_rows.append(torch.stack([w[:, :, -1] for w in captured(out.cross_attn)], 1).float().cpu())  # [B, L, H, S]
            logits = out.logits[:, -1].float().cpu()  # [B, V]
            probs = logits.softmax(-1)
            if c.never_output_pad:
                probs[:, c.pad_id] = 0.0
            top_p, top_i = probs.topk(min(top_k, probs.size(-1)), dim=-1)
            for i in range(b):
                if done[i]:
                    continue
                tid = int(top_i[i, 0])
                outputs[i].append(tid)
                steps[i].append(
                    StepInfo(
                        tgt_tok.id_to_token(tid),
                        tid,
                        [(tgt_tok.id_to_token(int(j)), float(p)) for p, j in zip(top_p[i], top_i[i])],
                        step_logprob(logits[i], tid),
                        top_ids=[int(j) for j in top_i[i]],
                    )
                )
                done[i] = tid == c.eos_id or len(outputs[i]) >= budgets[i]
            if all(done):
                break
    enc_self = torch.stack(captured(enc.self_attn), 1).float().cpu()  # [B, L, H, S, S]
    t_len = len(self_rows)
    results = []
    for i, source in enumerate(sources):
        n_layers, n_heads = enc_self.shape[1:3]
        dec = torch.zeros(n_layers, n_heads, t_len, t_len)
        for k, row in enumerate(self_rows):
            dec[:, :, k, : k + 1] = row[i]
        cross = torch.stack([row[i] for row in cross_rows], 2)  # [L, H, T, S]
        tkpm, skpm = tgt_kpm[i].cpu(), src_kpm[i].cpu()
        dec[:, :, tkpm] = 0.0  # pad query rows: never used, shown as exact zeros
        cross[:, :, tkpm] = 0.0
        e = enc_self[i].clone()
        e[:, :, skpm] = 0.0
        n = len(outputs[i])
        tgt_tokens = [BOS] + tgt_tok.ids_to_tokens(outputs[i][: n - 1]) + [PAD] * (t_len - n)
        padded = Source(
            source.text, src[i].tolist(), source.tokens + [PAD] * (s_len - len(source.ids)), source.n_real, source.notice
        )
        applied = AppliedMasks.from_rows(
            None if enc.attn_mask is None else enc.attn_mask[i].reshape(-1),
            s_len,
            [None if m is None else m[i, 0, -1] for m in self_masks],
            [None if m is None else m[i].reshape(-1) for m in cross_masks],
        )
        maps = AttentionMaps(e, dec, cross, skpm, tkpm, causal_mask(t_len), list(padded.tokens), tgt_tokens, applied)
        truncated = outputs[i][-1] != c.eos_id
        r = Translation(
            padded,
            tgt_tok.decode(outputs[i]),
            with_texts(steps[i], tgt_tok),
            maps,
            "greedy",
            1,
            notice=source.notice,
            logprob=sum(st.logprob or 0.0 for st in steps[i]),  # (a decoded step has its logprob)
        )
        if not has_hangul(source.text):  # as a single translation says it: translated all the same
            r.not_korean = True
            r.notice = "; ".join(x for x in (r.notice, NOT_KOREAN) if x)
        if truncated:
            r.notice = "; ".join(
                x for x in (r.notice, f"output stopped at the length limit ({budgets[i]} tokens) without [EOS]") if x
            )
        check_finite(r)
        results.append(r)
    return results


__all__ = ["translate_batch"]
