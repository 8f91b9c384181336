"""Inference precision of a loaded model: ``fp32`` (as trained), ``bf16`` or ``int8``.

- ``fp32``: the weights as stored, float32 arithmetic. The reference; nothing is converted.
- ``bf16``: every ``nn.Linear`` (attention W^Q, W^K, W^V, W^O, the FFN, the output projection)
  keeps its weight in bfloat16 (half the memory traffic per decoding step, which is what a
  one-token step pays for) and multiplies in bfloat16; its result comes back as float32. Everything
  between the products stays float32: embeddings, the residual stream, LayerNorm, the logits'
  softmax, and attention itself (Q Kᵀ, softmax, weighted sum of V, in
  :func:`core.transformer.attention.scaled_dot_product`), so the attention weights a caller
  captures are float32 rows that sum to 1, exactly those the model multiplied V with. The output
  projection then scores its :data:`REFINE_TOP` best candidates per position again in float32
  (:class:`RefinedLogits`). Rounding
  happens only at each product's inputs and output, never accumulates along the residual stream:
  on the shipped model this keeps more outputs identical to fp32 than casting the whole model did
  (``python -m bench.precision``). On a CPU whose oneDNN supports bfloat16 the weight is
  reordered once for oneDNN (:class:`PackedLinear`, PyTorch's own ``torch.ops.mkldnn`` linear as
  ``torch.compile`` uses on CPU) instead of at every call: same values as a plain bfloat16
  ``F.linear``, several times faster for one-token steps; elsewhere (a GPU) :class:`BF16Linear`
  uses ``F.linear``.
- ``int8-output``: every layer exactly as at ``fp32`` (so every attention weight is fp32's for the
  same tokens); only the output projection (``d_model × V``, about 60% of the weights an OPUS-MT-size
  decoding step reads) is dynamically quantized to int8, and its :data:`REFINE_TOP` best candidates per
  position are scored again in float32 (:class:`RefinedLogits`): the chosen token is fp32's whenever
  fp32's best is among int8's best :data:`REFINE_TOP`. CPU only.
- ``int8``: dynamic quantization of every ``nn.Linear`` (``torch.ao.quantization.quantize_dynamic``:
  int8 weights with one scale per output row, activations quantized per call; embeddings,
  LayerNorms and attention stay float32), the output projection's best candidates scored again in
  float32 as at bf16 (:class:`RefinedLogits`). CPU only.

Conversion is for inference only: a converted model is not trained or saved. It happens in place,
once, from float32 (to change precision, load the checkpoint again). Entry points:
``load_checkpoint(path, precision=...)``, :func:`core.checkpoints.checkpoint.to_precision` on a loaded
:class:`~core.checkpoints.checkpoint.Checkpoint` (what the app can call), or
:func:`convert_model` on a bare model. ``python -m core translate --precision bf16`` uses the first.
"""

from __future__ import annotations

import warnings
from typing import cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from core.defaults import DEFAULT_PRECISION, PRECISIONS


def check_precision(name: str) -> str:
    """Return ``name`` if it is one of :data:`PRECISIONS`.

    Raises:
        ValueError: any other value (the message lists the valid ones).
    """
    if name not in PRECISIONS:
        raise ValueError(f"unknown precision {name!r}: use {', '.join(PRECISIONS)}")
    return name


def model_precision(model: nn.Module) -> str:
    """The precision a model runs at: "int8-output" when its only dynamically quantized linear layer
    is the output projection, "int8" when others are too, "bf16" when its floating-point parameters
    are bfloat16, else "fp32"."""
    quantized = [name for name, m in model.named_modules() if _is_quantized(m)]
    if quantized:
        return "int8-output" if all(n.split(".")[0] == "generator" for n in quantized) else "int8"
    if any(isinstance(m, BF16Linear) for m in model.modules()):
        return "bf16"
    p = next((t for t in model.parameters() if t.is_floating_point()), None)
    return "bf16" if p is not None and p.dtype == torch.bfloat16 else "fp32"


def _is_quantized(module: nn.Module) -> bool:
    return type(module).__module__.startswith("torch.ao.nn.quantized")


class BF16Linear(nn.Module):
    """``y = x Wᵀ + b`` with W and b stored in bfloat16: x is rounded to bfloat16, the product is
    accumulated by the kernel and y returned in x's dtype (float32 in a bf16 model, see the module
    doc). Input ``[..., in_features]``, output ``[..., out_features]``. Inference only: no
    gradient, nothing saved; :meth:`weight` gives a plain bfloat16 copy ``[out_features, in_features]``.
    Works on any device (plain ``F.linear``); see :class:`PackedLinear` for the CPU fast path."""

    dense: Tensor  # buffers: [out_features, in_features] bfloat16 (or what _prepare made of it)
    bias: Tensor | None  # [out_features] bfloat16

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.register_buffer("dense", self._prepare(linear.weight.detach().to(torch.bfloat16)), persistent=False)
        bias = None if linear.bias is None else linear.bias.detach().to(torch.bfloat16)
        self.register_buffer("bias", bias, persistent=False)

    def _prepare(self, w: Tensor) -> Tensor | None:
        return w

    def weight(self) -> Tensor:
        """The weight ``[out_features, in_features]`` bfloat16 (a copy)."""
        return self.dense.clone()

    def _product(self, x: Tensor) -> Tensor:
        return F.linear(x, self.dense, self.bias)

    def forward(self, x: Tensor) -> Tensor:
        return self._product(x.to(torch.bfloat16)).to(x.dtype)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}, bf16"


class PackedLinear(BF16Linear):
    """:class:`BF16Linear` with W reordered once into oneDNN's blocked layout (CPU).

    A plain bfloat16 ``F.linear`` hands oneDNN the weight in PyTorch's layout and pays for the
    reorder on every call, which dominates a decoding step of one token; this does it once.

    Raises (at construction):
        RuntimeError: this PyTorch/CPU has no oneDNN bfloat16 linear (see :func:`packed_bf16_available`).
    """

    def _prepare(self, w: Tensor) -> Tensor | None:
        self.packed = torch.ops.mkldnn._reorder_linear_weight(w, 1)  # layout chosen for 1-row inputs
        return None

    def weight(self) -> Tensor:
        return self.packed.to_dense()

    def _product(self, x: Tensor) -> Tensor:
        return torch.ops.mkldnn._linear_pointwise(x, self.packed, self.bias, "none", [], "")

    def extra_repr(self) -> str:
        return super().extra_repr() + " packed"


#: bf16: per position, the scores of this many best candidates are computed again in float32.
REFINE_TOP = 8


class RefinedLogits(nn.Module):
    """The output projection at bf16, int8 or int8-output: ``logits = x Wᵀ`` by a :class:`BF16Linear` (or
    :class:`PackedLinear`, or a dynamically quantized int8 linear), then, per position, the
    :data:`REFINE_TOP` largest scores computed again in float32 from the float32 weight and written
    over their rounded values. Input ``[..., d_model]`` float32, output ``[..., V]`` float32.

    Why: rounding the 8,000- or 65,000-way product to bfloat16 was what changed most greedy choices
    against fp32 (on the shipped model, 202 of 207 test outputs stay identical with a float32 output
    projection, 188 with a bfloat16 one, ``python -m bench.precision``), while the full product in
    float32 would cost the time bfloat16 saves. With the best candidates exact, the choice, the top-k
    panel and the chosen token's probability use float32 scores whenever float32's best token is
    among bfloat16's best :data:`REFINE_TOP`. The weight is the model's own float32 tensor (for a
    tied projection: the embedding table, which stays float32), so nothing is copied.

    ``rank_bias`` ``[V]``: a bias the model adds to the logits afterwards (OPUS-MT's
    ``final_logits_bias``), counted when ranking the candidates, not added here.
    """

    exact_weight: Tensor  # buffers: [V, d_model] float32
    exact_bias: Tensor | None  # [V]
    rank_bias: Tensor | None  # [V]

    def __init__(
        self,
        product: BF16Linear,
        weight: Tensor,
        bias: Tensor | None = None,
        rank_bias: Tensor | None = None,
        k: int = REFINE_TOP,
    ) -> None:
        super().__init__()
        self.product = product
        self.register_buffer("exact_weight", weight.detach().float(), persistent=False)  # [V, d_model]
        self.register_buffer("exact_bias", None if bias is None else bias.detach().float(), persistent=False)
        self.register_buffer("rank_bias", None if rank_bias is None else rank_bias.detach().float(), persistent=False)
        self.k = min(k, product.out_features)

    @property
    def in_features(self) -> int:
        return self.product.in_features

    @property
    def out_features(self) -> int:
        return self.product.out_features

    def weight(self) -> Tensor:
        """The weight ``[V, d_model]`` of the full (rounded) product: bfloat16, or int8 quantized."""
        return self.product.weight()

    def forward(self, x: Tensor) -> Tensor:
        logits = self.product(x)  # [..., V] float32 from a bfloat16 product
        ranked = logits if self.rank_bias is None else logits + self.rank_bias
        idx = ranked.topk(self.k, dim=-1).indices  # [..., k]
        rows = self.exact_weight[idx]  # [..., k, d_model]
        exact = (rows @ x.to(rows.dtype).unsqueeze(-1)).squeeze(-1)  # [..., k] float32
        if self.exact_bias is not None:
            exact = exact + self.exact_bias[idx]
        return logits.scatter(-1, idx, exact.to(logits.dtype))

    def extra_repr(self) -> str:
        return f"top {self.k} in float32"


def packed_bf16_available() -> bool:
    """True when :class:`PackedLinear` works here: PyTorch built with oneDNN, its bfloat16 support
    on this CPU, and a packed product equal to plain ``F.linear`` on a small check."""
    try:
        if not (torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported()):
            return False
        lin = nn.Linear(16, 8).to(torch.bfloat16)
        x = torch.randn(2, 3, 16, dtype=torch.bfloat16)
        with torch.no_grad():
            return torch.allclose(PackedLinear(lin)(x).float(), lin(x).float(), atol=1e-2, rtol=1e-2)
    except (AttributeError, RuntimeError):  # no such op in this build, or oneDNN refused
        return False


def _bf16_linears(model: nn.Module, packed: bool) -> None:
    """Replace every ``nn.Linear`` of ``model`` by a :class:`PackedLinear` (``packed``) or a
    :class:`BF16Linear` (in place)."""
    kind = PackedLinear if packed else BF16Linear
    targets = [
        (parent, name, child)
        for parent in model.modules()
        for name, child in parent.named_children()
        if isinstance(child, nn.Linear)
    ]
    for parent, name, child in targets:
        if name == "generator":  # the output projection: its best candidates are scored again in float32
            rank_bias = getattr(parent, "final_logits_bias", None)
            setattr(
                parent,
                name,
                RefinedLogits(kind(child), child.weight, child.bias, rank_bias if isinstance(rank_bias, Tensor) else None),
            )
        else:
            setattr(parent, name, kind(child))


def _clear_stacked(model: nn.Module) -> None:
    """Drop the stacked attention projections built for the old weights (they would hold memory)."""
    for m in model.modules():
        clear = getattr(m, "clear_stacked", None)
        if callable(clear):
            clear()


def column_major_linears(model: nn.Module) -> nn.Module:
    """Store each ``nn.Linear`` weight ``[out, in]`` with at least as many outputs as inputs
    column-major (in place; same shape, same values) and return ``model``. ``F.linear(x, W)``
    computes ``x Wᵀ``; with W column-major, Wᵀ is a row-major ``[in, out]`` matrix. For the one-row
    inputs of a decoding step the CPU BLAS streams a matrix fastest along its longer rows, so a
    matrix is stored with rows along its larger dimension: the output projection (65,001 × 512 at
    OPUS-MT size: 7 ms instead of 17 ms per step on the benchmark machine), W^Q/W^K/W^V/W^O and the
    FFN's first layer column-major; the FFN's second layer (``[d_model, d_ff]``, more inputs than
    outputs) keeps its row-major layout (2048 → 512 out of cache: 240 µs instead of 363 µs). Tied
    weights stay tied (every module holding the same parameter gets the new one). For fp32
    inference on the CPU; state dicts and saved checkpoints are unchanged (they are written
    contiguous)."""
    new: dict[int, nn.Parameter] = {}
    for m in model.modules():
        if isinstance(m, nn.Linear) and id(m.weight) not in new and m.weight.is_contiguous() and m.weight.dim() == 2:
            w = m.weight
            if w.shape[0] < w.shape[1]:  # more inputs than outputs: its rows are the longer side already
                continue
            new[id(w)] = nn.Parameter(w.detach().t().contiguous().t(), requires_grad=w.requires_grad)
    for m in model.modules():
        for name, param in list(m._parameters.items()):
            if param is not None and id(param) in new:
                m._parameters[name] = new[id(param)]
    _clear_stacked(model)
    return model


def _row_major_linears(model: nn.Module) -> None:
    """Give each ``nn.Linear`` a contiguous (row-major) weight again, before it is converted."""
    for m in model.modules():
        if isinstance(m, nn.Linear) and not m.weight.is_contiguous():
            m.weight = nn.Parameter(m.weight.detach().contiguous(), requires_grad=m.weight.requires_grad)


def convert_model(model: nn.Module, precision: str) -> nn.Module:
    """Convert a float32 model **in place** to ``precision`` for inference and return it (eval mode).

    "fp32" leaves it as it is; "bf16" replaces each ``nn.Linear`` by a bfloat16 one returning
    float32 (:class:`PackedLinear` on a CPU with oneDNN bfloat16 support, else :class:`BF16Linear`;
    a tied output projection gets its own bfloat16 copy, the embedding stays float32); "int8" replaces each ``nn.Linear``
    (attention W^Q, W^K, W^V, W^O, the FFN and the output projection) with a dynamically quantized
    int8 one (per-output-row weight scales); a tied output projection gets its own int8 copy and
    the embedding it was tied to stays float32. "int8-output" quantizes the output projection only
    and keeps every other linear layer float32 (column-major, as :func:`column_major_linears`). At
    bf16, int8 and int8-output the output projection is wrapped in :class:`RefinedLogits` (its best
    candidates scored again in float32). Converting a model already at ``precision`` does nothing.

    Raises:
        ValueError: unknown precision; the model is not float32 (already converted to another
            precision: load the checkpoint again); "int8" or "int8-output" on a non-CPU device, or
            where this PyTorch has no quantized CPU engine or no ``torch.ao.quantization``;
            "int8-output" on a model without an ``nn.Linear`` output projection.
    """
    check_precision(precision)
    current = model_precision(model)
    if current == precision:
        return model.eval()
    if current != "fp32":
        raise ValueError(f"the model is already converted to {current}; load the checkpoint again to use {precision}")
    model.eval()
    _clear_stacked(model)
    _row_major_linears(model)  # a column-major fp32 model (see column_major_linears) converts as stored
    if precision == "bf16":
        on_cpu = {t.device.type for t in model.parameters()} == {"cpu"}
        _bf16_linears(model, packed=on_cpu and packed_bf16_available())
        return model
    # int8, int8-output
    devices = {t.device.type for t in model.parameters()}
    if devices != {"cpu"}:
        raise ValueError(f"{precision} precision runs on the CPU only (use --device cpu, or bf16 on a GPU)")
    engines = [e for e in torch.backends.quantized.supported_engines if e != "none"]
    if not engines:
        raise ValueError("int8 precision needs a quantized CPU engine (fbgemm/x86/onednn/qnnpack); this PyTorch has none")
    try:
        from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic
    except ImportError as exc:  # a PyTorch without eager-mode quantization
        raise ValueError(f"int8 precision needs torch.ao.quantization, missing in torch {torch.__version__} ({exc})") from None
    generator = getattr(model, "generator", None)
    exact = (generator.weight, generator.bias) if isinstance(generator, nn.Linear) else None
    if precision == "int8-output" and exact is None:
        raise ValueError("int8-output precision needs a model whose output projection `generator` is an nn.Linear")
    spec = {"generator": per_channel_dynamic_qconfig} if precision == "int8-output" else {nn.Linear: per_channel_dynamic_qconfig}
    with warnings.catch_warnings():  # torch.ao.quantization announces its move to torchao; it still works
        warnings.filterwarnings("ignore", message=r".*(torch\.ao\.quantization|quantize_per_tensor).*deprecated")
        quantize_dynamic(model, spec, dtype=torch.qint8, inplace=True)
    if exact is not None:  # the best candidates scored again in float32, as at bf16
        rank_bias = getattr(model, "final_logits_bias", None)
        # (the generator is a BF16Linear, a PackedLinear or an int8 linear: each is called the same way)
        product = cast(BF16Linear, model.generator)
        model.generator = RefinedLogits(product, *exact, rank_bias if isinstance(rank_bias, Tensor) else None)
    if precision == "int8-output":
        column_major_linears(model)  # the float32 layers as a loaded fp32 model has them: the same products
    return model


__all__ = [
    "PRECISIONS",
    "DEFAULT_PRECISION",
    "BF16Linear",
    "PackedLinear",
    "REFINE_TOP",
    "RefinedLogits",
    "check_precision",
    "column_major_linears",
    "convert_model",
    "model_precision",
    "packed_bf16_available",
]
