"""Attention Studio core: the Transformer of "Attention Is All You Need" (Vaswani et al.,
2017), written out, with attention maps, masks, tokenizers and a safe checkpoint format.

Nothing in this package imports Qt. Masks everywhere are boolean with True = masked
(the position may not be attended to), as in ``torch.nn.Transformer``.
"""

__version__ = "0.1.0"  # the one place: pyproject.toml reads it, --version prints it

from core.errors import CheckpointError, InputError
from core.transformer.config import ModelConfig

__all__ = ["__version__", "ModelConfig", "CheckpointError", "InputError"]
