"""The three kinds of attention in the encoder-decoder Transformer (paper §3.2.3), named once for the
whole project: encoder self-attention, masked decoder self-attention, and encoder-decoder
(cross-) attention.

``AttentionKind`` is a ``str`` enum, so ``AttentionKind.ENC == "enc"`` and the short names in JSON,
command-line options (``--ablate-kind enc``) and saved results stay valid. The app's views
(``encoder``, ``decoder``, ``cross``, ``masks``) are its own registry, ``gui/state/view_kinds.py``,
which names the attention kind each one shows.
"""

from __future__ import annotations

from enum import Enum


class AttentionKind(str, Enum):
    """Which attention: ``ENC`` encoder self, ``DEC`` (masked) decoder self, ``CROSS`` decoder → encoder."""

    ENC = "enc"
    DEC = "dec"
    CROSS = "cross"


KINDS = tuple(k.value for k in AttentionKind)  # ("enc", "dec", "cross")

__all__ = ["KINDS", "AttentionKind"]
