"""Resolve a device name once, at start; everything else takes the device from tensors."""

from __future__ import annotations

import torch


def resolve_device(name: str = "auto") -> torch.device:
    """"auto" -> CUDA when available, else CPU; "cpu"; "cuda".

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
