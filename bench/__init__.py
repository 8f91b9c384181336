"""Benchmarks (``python -m bench``): a tool for the source repository, not part of the installed app.

They read test fixtures and write ``docs/``, so they run from the repository root; :func:`checkout`
finds it there (the current directory) rather than relative to this package's files.
"""

from __future__ import annotations

from pathlib import Path


def checkout() -> Path:
    """The repository root: the current directory, which must hold ``tests/fixtures``."""
    root = Path.cwd()
    if not (root / "tests" / "fixtures").is_dir():
        raise SystemExit("error: run python -m bench from the repository root (it reads tests/fixtures, writes docs/)")
    return root
