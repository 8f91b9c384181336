"""The one place for settings shared by the CLI, the app, the benchmarks and the tests."""

from __future__ import annotations

from pathlib import Path

from core.errors import InputError

#: The shipped default model, used when no ``--checkpoint`` is given (non-commercial weights; the
#: permissive ``ko-en-base`` ships beside it).
DEFAULT_CHECKPOINT = Path(__file__).resolve().parent.parent / "checkpoints" / "ko-en-nc"

#: Beam sizes accepted everywhere (1 = greedy). Above 16 the search costs more than it finds on
#: this model and a long request would keep the app busy for seconds.
MIN_BEAM, MAX_BEAM = 1, 16


def check_beam(beam: int) -> int:
    """Return ``beam`` if ``MIN_BEAM <= beam <= MAX_BEAM``.

    Raises:
        InputError: the beam size is out of range (one-line message; InputError is what the CLI and
            the app report without a traceback).
    """
    if not isinstance(beam, int) or isinstance(beam, bool) or not MIN_BEAM <= beam <= MAX_BEAM:
        raise InputError(f"beam size must be between {MIN_BEAM} and {MAX_BEAM} (got {beam})")
    return beam
