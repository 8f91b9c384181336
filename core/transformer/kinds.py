"""The three kinds of attention in the encoder-decoder Transformer (paper §3.2.3), named once for the
whole project: encoder self-attention, masked decoder self-attention, and encoder-decoder
(cross-) attention.

``AttentionKind`` is a ``str`` enum, so ``AttentionKind.ENC == "enc"`` and the short names in JSON,
command-line options (``--ablate-kind enc``) and saved results stay valid. The app's views are named
``encoder`` / ``decoder`` / ``cross`` (plus ``masks``, which is not an attention kind):
:attr:`AttentionKind.view` and :meth:`AttentionKind.from_view` convert.
"""

from __future__ import annotations

from enum import Enum


class AttentionKind(str, Enum):
    """Which attention: ``ENC`` encoder self, ``DEC`` (masked) decoder self, ``CROSS`` decoder → encoder."""

    ENC = "enc"
    DEC = "dec"
    CROSS = "cross"

    @property
    def view(self) -> str:
        """The app's view name: "encoder", "decoder" or "cross"."""
        return {"enc": "encoder", "dec": "decoder", "cross": "cross"}[self.value]

    @classmethod
    def from_view(cls, view: str) -> AttentionKind:
        """The kind shown by the app's view ``view``.

        Raises:
            ValueError: ``view`` is not an attention view (e.g. "masks").
        """
        for kind in cls:
            if kind.view == view:
                return kind
        raise ValueError(f"{view!r} is not an attention view (encoder, decoder, cross)")


KINDS = tuple(k.value for k in AttentionKind)  # ("enc", "dec", "cross")
VIEW_TO_KIND = {k.view: k.value for k in AttentionKind}  # {"encoder": "enc", "decoder": "dec", "cross": "cross"}

__all__ = ["KINDS", "VIEW_TO_KIND", "AttentionKind"]
