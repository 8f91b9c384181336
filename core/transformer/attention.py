"""Scaled dot-product and multi-head attention (paper §3.2.1–3.2.2, Eq. 1).

Attention weights are *returned*, never stored on the module. Masks are boolean,
**True = masked (may not attend)**, broadcastable to ``[B, H, T_q, T_k]``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def scaled_dot_product(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, dropout: nn.Module | None = None
) -> tuple[Tensor, Tensor]:
    """Attention(Q, K, V) = softmax(Q Kᵀ / √d_head) V, with the weights made explicit (Eq. 1).

    Args:
        q: ``[B, H, T_q, d_head]``; k, v: ``[B, H, T_k, d_head]``.
        mask: bool broadcastable to ``[B, H, T_q, T_k]``, True = masked, or None.
        dropout: applied to the weights used for the output (training only); the returned
            weights are the pre-dropout probabilities.
    Returns:
        ``(out [B, H, T_q, d_head], weights [B, H, T_q, T_k])``. Masked cells of ``weights``
        are exactly 0 and a fully masked row is all zeros (its output is 0), never NaN.

    Precision: the whole of Eq. 1 runs in float32. bfloat16/float16 q, k, v (bf16 inference) are
    upcast first and ``out`` is cast back to v's dtype, so ``weights`` is float32 (rows sum to 1
    up to float32 rounding) and is exactly the matrix that multiplied V. For float32 inputs no
    input is cast: plain float32 code.
    """
    out_dtype = v.dtype
    if not (q.dtype == k.dtype == v.dtype == torch.float32):  # (a cast call per tensor costs at every step)
        q, k, v = q.float(), k.float(), v.float()
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
    if mask is not None:
        # dtype-safe fill: finfo.min is representable in fp16/bf16/fp32, unlike -1e9 in fp16
        scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    if mask is not None:
        weights = weights.masked_fill(mask, 0.0)  # exact zeros; fully masked rows -> 0, not uniform
    used = dropout(weights) if dropout is not None else weights
    out = torch.matmul(used, v)
    return (out if out_dtype == torch.float32 else out.to(out_dtype)), weights


def stack_rows(weights: list[Tensor]) -> Tensor:
    """``torch.cat(weights)`` (``[n·out, in]``), stored column-major when every weight is (see
    :func:`core.checkpoints.precision.column_major_linears`: the layout a one-row product streams
    fastest for a matrix with more outputs than inputs); the same values either way."""
    if all(w.dim() == 2 and not w.is_contiguous() and w.t().is_contiguous() for w in weights):
        return torch.cat([w.t() for w in weights], dim=1).t()
    return torch.cat(weights)


def _plain(*modules: nn.Module) -> bool:
    """True when every module is a plain ``nn.Linear`` whose ``weight`` and ``bias`` are its own parameters
    (tensors that can be stacked; not pruned or parametrized, where ``weight`` is computed)."""
    return all(isinstance(m, nn.Linear) and "weight" in m._parameters and "bias" in m._parameters for m in modules)


def _dense_weight(linear: nn.Module) -> Tensor:
    """The ``[out, in]`` weight of a linear layer: ``nn.Linear.weight`` itself, or a plain copy for
    the inference-only linears of :mod:`core.checkpoints.precision` (``weight()`` a method: int8
    dequantized to float32, bf16 prepacked unpacked to bfloat16)."""
    w = linear.weight
    if not isinstance(w, Tensor):
        w = w()
    return w.dequantize() if w.is_quantized else w


class MultiHeadAttention(nn.Module):
    """Multi-head attention (§3.2.2):

        MultiHead(Q, K, V) = Concat(head_1, …, head_h) W^O,
        head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V).

    The paper's matrices are the modules ``w_q``, ``w_k``, ``w_v`` (W^Q, W^K, W^V) and ``w_o``
    (W^O), each ``d_model × d_model`` plus a bias; :attr:`W_Q`, :attr:`W_K`, :attr:`W_V` and
    :attr:`W_O` show them in the paper's orientation (input × output). All h heads' W_i^Q sit
    side by side in W^Q: head i is columns ``[i·d_head, (i+1)·d_head)`` of ``W_Q`` (same for K
    and V), and W^O's rows are grouped the same way, one block of d_head rows per head.
    ``nn.Linear`` stores the transpose (``weight`` is output × input), so ``x @ W_Q`` is
    ``w_q(x)`` minus the bias; the names of the stored tensors (``w_q.weight`` …) are kept so
    every checkpoint loads. For speed, self-attention computes x W^Q, x W^K and x W^V in one
    matrix product (:meth:`project_qkv`, the three matrices stacked); the result is the same.

    With ``need_weights=False`` (training) it uses ``F.scaled_dot_product_attention``;
    with ``need_weights=True`` it computes the weights explicitly and returns them.
    Both paths give the same output (tested within 1e-5).

    Head ablation: :attr:`ablated_heads` (0-based head indices, default empty) zeroes
    those heads' outputs ``head_i`` before the concatenation meets W^O, exactly as if W^O's rows
    for head i were 0 (the bias stays). Their attention weights are still computed and returned.
    Set it with :func:`core.transformer.ablation.ablated`; when empty it costs nothing.

    Recording (the inside of one attention step): while :attr:`record` is a list, every
    :meth:`attend` call appends ``{"q", "k", "v", "mask", "weights", "heads"}`` (the projected
    ``[B, H, T, d_head]`` tensors, the mask as given (True = masked) or None, the weights
    ``[B, H, T_q, T_k]`` or None, and the head outputs ``[B, H, T_q, d_head]`` before W^O and
    before any ablation). Default None: nothing is kept.

    Stacked projection weights: for one-position inputs (incremental decoding, one step at a
    time) while no gradient is wanted (``torch.no_grad`` / ``torch.inference_mode``), the stacked
    ``[3·D, D]`` matrix of :meth:`project_qkv` is built once and reused as long as ``w_q``, ``w_k``,
    ``w_v`` hold the same tensors, unmodified (same storage, same version counter), instead of
    being concatenated at every step (in the layout of the three: column-major when they are, see
    :func:`stack_rows`); the values are the same, so outputs are bit-identical. It
    costs one extra copy of those matrices per decoder self-attention. Longer inputs (the encoder,
    teacher forcing) run once per sentence and concatenate as before; with gradients on (training)
    every call concatenates, so gradients flow to the three. :meth:`clear_stacked` drops the copy.

    Inference-only projections (``precision="int8"`` or ``"bf16"``, see
    :mod:`core.checkpoints.precision`): when ``w_q``, ``w_k``, ``w_v`` are not ``nn.Linear`` (int8
    dynamically quantized, or bf16 with prepacked weights) they are applied one by one.
    """

    ablated_heads: tuple[int, ...] = ()  # class default: modules loaded or pickled earlier have it too
    record: list | None = None

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model {d_model} not divisible by n_heads {n_heads}")
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.dropout_p = dropout
        self.dropout = nn.Dropout(dropout)

    @property
    def W_Q(self) -> Tensor:
        """W^Q ``[d_model, h·d_head]`` as in the paper (input × output): head i's W_i^Q is
        columns ``i·d_head … (i+1)·d_head``. A view of ``w_q.weight``, transposed (int8 or packed
        bf16 precision: a plain copy, dequantized or unpacked)."""
        return _dense_weight(self.w_q).t()

    @property
    def W_K(self) -> Tensor:
        """W^K ``[d_model, h·d_head]`` (input × output); head i is columns ``i·d_head …``."""
        return _dense_weight(self.w_k).t()

    @property
    def W_V(self) -> Tensor:
        """W^V ``[d_model, h·d_head]`` (input × output); head i is columns ``i·d_head …``."""
        return _dense_weight(self.w_v).t()

    @property
    def W_O(self) -> Tensor:
        """W^O ``[h·d_head, d_model]`` (input × output): rows ``i·d_head …`` take head i's output."""
        return _dense_weight(self.w_o).t()

    def _stacked(self, names: tuple[str, ...], keep: bool = False) -> tuple[Tensor, Tensor]:
        """Weights ``[n·D, D]`` and biases ``[n·D]`` of the projections ``names`` (e.g. ``("w_q",
        "w_k", "w_v")``) stacked in that order, for one GEMM. With ``keep`` the result is kept and
        reused while no gradient is wanted and the parameters are the very tensors it was built from."""
        # (each module's _parameters read directly: nn.Module.__getattr__ twice per tensor cost more than
        # the whole check below at every decoding step)
        params: list[Tensor] = [
            t  # type: ignore[misc]  # (every projection here has a weight and a bias)
            for n in names
            for t in (self._modules[n]._parameters["weight"], self._modules[n]._parameters["bias"])  # type: ignore[union-attr]
        ]
        if not keep or torch.is_grad_enabled():  # once, or training: a fresh cat (gradients reach each matrix)
            return stack_rows(params[0::2]), torch.cat(params[1::2])
        try:
            key = [(t.data_ptr(), t._version, t.dtype, t.shape, t.device) for t in params]
        except RuntimeError:  # inference-tensor parameters track no version: never reuse
            return stack_rows(params[0::2]), torch.cat(params[1::2])
        cache = self.__dict__.setdefault("_stacked_cache", {})
        hit = cache.get(names)
        if hit is None or hit[0] != key:
            # the detached aliases keep the source storage alive, so an equal data_ptr can only
            # be that same storage (never a freed address reused), and its version shows edits
            hit = cache[names] = (key, [t.detach() for t in params], stack_rows(params[0::2]), torch.cat(params[1::2]))
        return hit[2], hit[3]

    def clear_stacked(self) -> None:
        """Drop the stacked projection matrices kept for inference (rebuilt when next needed)."""
        self.__dict__.pop("_stacked_cache", None)

    def _split(self, x: Tensor) -> Tensor:
        b, t, _ = x.shape  # [B, T, D] -> [B, H, T, d_head]
        return x.view(b, t, self.n_heads, self.d_head).transpose(1, 2)

    def project_q(self, x: Tensor) -> Tensor:
        """Queries x W_i^Q for every head i: ``x [B, T_q, D]`` → ``[B, H, T_q, d_head]``."""
        return self._split(self.w_q(x))

    def project_kv(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """Keys x W_i^K and values x W_i^V for every head i: ``x [B, T_k, D]`` →
        ``([B, H, T_k, d_head], [B, H, T_k, d_head])``, W^K and W^V stacked into one GEMM."""
        if not _plain(self.w_k, self.w_v):  # inference-only linears (int8, packed bf16): one module each
            return self._split(self.w_k(x)), self._split(self.w_v(x))
        w, b = self._stacked(("w_k", "w_v"))
        k, v = F.linear(x, w, b).chunk(2, dim=-1)  # one GEMM for W^K and W^V
        return self._split(k), self._split(v)

    def project_qkv(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Self-attention's x W^Q, x W^K, x W^V for ``x [B, T, D]``, the three matrices stacked into
        one GEMM: three ``[B, H, T, d_head]`` (head i = columns ``i·d_head …`` of each product)."""
        if not _plain(self.w_q, self.w_k, self.w_v):  # inference-only linears (int8, packed bf16): one each
            return self._split(self.w_q(x)), self._split(self.w_k(x)), self._split(self.w_v(x))
        w, b = self._stacked(("w_q", "w_k", "w_v"), keep=x.size(-2) == 1)  # kept for decoding steps
        q, k, v = F.linear(x, w, b).chunk(3, dim=-1)
        return self._split(q), self._split(k), self._split(v)

    def attend(
        self, q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, need_weights: bool = False
    ) -> tuple[Tensor, Tensor | None]:
        """Attend with projected ``q [B, H, T_q, d_head]`` to ``k, v [B, H, T_k, d_head]``.

        Returns ``(out [B, T_q, D], weights [B, H, T_q, T_k] or None)``.
        """
        if need_weights:
            out, weights = scaled_dot_product(q, k, v, mask, self.dropout if self.training else None)
        else:
            weights = None
            p = self.dropout_p if self.training else 0.0
            # SDPA's boolean mask means True = *may* attend: invert ours.
            attn_mask = None if mask is None else ~mask
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=p)
            if mask is not None:  # a fully masked row attends to nothing: 0, never NaN, on every kernel
                out = out.masked_fill(mask.all(dim=-1, keepdim=True), 0.0)
        if self.record is not None:
            self.record.append({"q": q, "k": k, "v": v, "mask": mask, "weights": weights, "heads": out})
        if self.ablated_heads:  # [B, H, T_q, d_head]: zero head i's output before W^O
            out = out.index_fill(1, torch.tensor(self.ablated_heads, device=out.device), 0.0)
        b, _, t, _ = out.shape
        out = out.transpose(1, 2).reshape(b, t, self.n_heads * self.d_head)
        return self.w_o(out), weights

    def forward(
        self, x_q: Tensor, x_kv: Tensor, mask: Tensor | None = None, need_weights: bool = False
    ) -> tuple[Tensor, Tensor | None]:
        """MultiHead(Q, K, V) = Concat(head_1..head_h) W^O.

        Args:
            x_q: ``[B, T_q, D]`` queries' inputs; x_kv: ``[B, T_k, D]`` keys'/values' inputs.
            mask: bool broadcastable to ``[B, H, T_q, T_k]``, True = masked.
        Returns:
            ``(out [B, T_q, D], weights [B, H, T_q, T_k] or None)``.
        """
        if x_kv is x_q:
            q, k, v = self.project_qkv(x_q)
        else:
            q, (k, v) = self.project_q(x_q), self.project_kv(x_kv)
        return self.attend(q, k, v, mask, need_weights)
