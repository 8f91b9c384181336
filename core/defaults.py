"""The one place for settings shared by the CLI, the app, the benchmarks and the tests."""

from __future__ import annotations

from core.errors import InputError
from core.locations import DEFAULT_MODEL, default_checkpoint

#: The shipped default model's folder, used when no ``--checkpoint`` is given (non-commercial weights;
#: the permissive ``ko-en-base`` is in the source repository, not in the wheel). Found through the
#: installed ``checkpoints`` package (core/locations.py), never relative to the source tree.
DEFAULT_CHECKPOINT = default_checkpoint()
__all__ = ["DEFAULT_CHECKPOINT", "DEFAULT_MODEL", "MIN_BEAM", "MAX_BEAM", "check_beam", "PRECISIONS", "DEFAULT_PRECISION"]

#: Beam sizes accepted everywhere (1 = greedy). Above 16 the search costs more than it finds on
#: this model and a long request would keep the app busy for seconds.
MIN_BEAM, MAX_BEAM = 1, 16

#: Inference precisions a checkpoint can be loaded at (core/checkpoints/precision.py); fp32 = as stored.
PRECISIONS = ("fp32", "bf16", "int8", "int8-output")
DEFAULT_PRECISION = "fp32"


def check_beam(beam: int) -> int:
    """Return ``beam`` if ``MIN_BEAM <= beam <= MAX_BEAM``.

    Raises:
        InputError: the beam size is out of range (one-line message; InputError is what the CLI and
            the app report without a traceback).
    """
    if not isinstance(beam, int) or isinstance(beam, bool) or not MIN_BEAM <= beam <= MAX_BEAM:
        raise InputError(f"beam size must be between {MIN_BEAM} and {MAX_BEAM} (got {beam})")
    return beam
