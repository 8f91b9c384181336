"""Resolve a device name once, at start; everything else takes the device from tensors."""

from __future__ import annotations

import torch


def resolve_device(name: str = "auto") -> torch.device:
    """ "auto" -> CUDA when available, else CPU; "cpu"; "cuda".

    Raises:
        ValueError: unknown name, or "cuda" asked for on a machine without a usable GPU.
    """
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name == "cuda":
        if not torch.cuda.is_available():
            raise ValueError("device 'cuda' requested but no CUDA GPU is available (use --device cpu)")
        return torch.device("cuda")
    raise ValueError(f"unknown device {name!r}: use auto, cpu or cuda")


def cuda_unavailable_reason() -> str | None:
    """None when CUDA can be used, else a short human-readable reason (for a disabled GUI option)."""
    if not torch.backends.cuda.is_built():
        return "this PyTorch build has no CUDA support"
    if not torch.cuda.is_available():
        return "no CUDA GPU found"
    return None


def cpu_bf16_native() -> bool:
    """True when this CPU computes bfloat16 matrix products in hardware (AVX512-BF16 or AMX).

    Without either, PyTorch emulates bf16 on the CPU: measured here on an AVX2-only AMD EPYC,
    bf16 autocast training ran at 44 target tokens/s against fp32's 612 (``python -m
    bench.train_speed --steps 3 --threads 1``), and bf16 inference at OPUS-MT size was 1.15×
    slower than fp32. Uses PyTorch's private probes; False if they are missing.
    """
    cpu = getattr(torch, "cpu", None)
    probes = [getattr(cpu, name, None) for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported")]
    return any(bool(p()) for p in probes if callable(p))


def cpu_capability() -> str:
    """The vector instruction set PyTorch's CPU kernels use here ("AVX2", "AVX512", ...), plus
    "+BF16" when :func:`cpu_bf16_native` holds; "unknown" if PyTorch cannot say."""
    try:
        cap = torch.backends.cpu.get_cpu_capability()
    except (AttributeError, RuntimeError):
        return "unknown"
    return cap + ("+BF16" if cpu_bf16_native() else "")
