"""The run folder of ``python -m core train``: one writer at a time, saves that are complete or
absent, and resume from the newest complete save.

Layout::

    OUT/.lock             the pid of the process that trains, which holds a flock on OUT itself;
                          a second run on OUT is refused
    OUT/options.json      the run's options (replaced atomically)
    OUT/step_N/           one complete save: config, weights, tokenizers, card, train_state.*,
                          manifest.json (sizes and SHA-256 of every file, written last)
    OUT/best/             best held-out chrF so far (shipped format, replaced atomically)
    OUT/log.jsonl         one line per validation

Each ``step_N`` is written under a temporary name and renamed into place
(:func:`core.checkpoints.atomic_io.atomic_dir`); older saves are pruned only after a new one is
complete. Runs written before this layout (``OUT/last/`` + ``OUT/train_state.*``) still resume.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path

from core.checkpoints.atomic_io import recover, verify_manifest, write_text_atomic
from core.errors import StudioError

log = logging.getLogger("core.training.train")

try:  # POSIX advisory lock, released by the OS when the process dies (kill -9 included)
    import fcntl
except ImportError:  # Windows: no lock (documented)
    fcntl = None  # type: ignore[assignment]


class RunLockedError(StudioError, RuntimeError):
    """Another process is training into the same run folder (the CLI prints it as one line, exit 2)."""


class RunLock:
    """Exclusive lock on the run folder ``OUT`` for the life of a training process.

    The lock is an OS lock (``flock``) on the folder itself, so it cannot be bypassed by moving or
    deleting a file inside it; the OS drops it when the process dies (``kill -9`` included).
    ``OUT/.lock`` only records the holder's pid, for the message a second writer gets.

    Raises:
        RunLockedError: another live process holds it (the message names its pid).
    """

    def __init__(self, out: Path):
        self.path = Path(out) / ".lock"
        self._fd: int | None = None

    def acquire(self) -> RunLock:
        if fcntl is None:  # Windows: no lock (documented)
            return self
        fd = os.open(self.path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            try:
                other = self.path.read_text(encoding="utf-8", errors="replace").strip()[:32] or "?"
            except OSError:
                other = "?"
            raise RunLockedError(
                f"{self.path.parent}: another training run (pid {other}) is writing this folder; "
                "wait for it or choose another --out"
            ) from None
        try:  # the pid, for the message a second writer gets (the lock itself is the flock above)
            pid_fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                os.write(pid_fd, str(os.getpid()).encode())
            finally:
                os.close(pid_fd)
        except OSError as exc:
            os.close(fd)
            raise OSError(exc.errno, f"could not write {self.path} ({exc.strerror or exc})") from exc
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None


def tidy(out: Path) -> None:
    """Remove what a killed process left half-written in ``out`` (``*.partial-PID`` files and
    folders of an unfinished save or rewrite). Call only while holding the :class:`RunLock`."""
    for p in {*Path(out).glob("*.partial-*"), *Path(out).glob(".*.partial-*")}:
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)


def step_dirs(out: Path) -> list[Path]:
    """``OUT/step_N`` folders, oldest first (by N)."""
    return sorted((p for p in Path(out).glob("step_*") if p.is_dir() and p.name[5:].isdigit()), key=lambda p: int(p.name[5:]))


def newest_complete_save(out: Path) -> tuple[Path, Path] | None:
    """``(weights_dir, state_dir)`` of the newest save that is complete and undamaged (its manifest
    verified), or None. Damaged or partial saves are logged and skipped, never returned. A run in
    the earlier layout returns ``(OUT/last, OUT)``."""
    out = Path(out)
    for d in reversed(step_dirs(out)):
        recover(d)
        if not (d / "train_state.json").is_file():
            continue  # a weights-only save (never written by this layout)
        problem = verify_manifest(d)
        if problem is None:
            return d, d
        log.warning("skipping a damaged save: %s", problem)
    if (out / "last" / "model.safetensors").is_file() and (out / "train_state.json").is_file():
        return out / "last", out
    return None


def has_saves(out: Path) -> bool:
    """True when ``out`` already holds a run's saves (step folders or the earlier ``last/``)."""
    return bool(step_dirs(out)) or (Path(out) / "last").is_dir()


def prune(out: Path, keep: int) -> None:
    """Remove all but the newest ``keep`` step folders (each renamed aside first, so a crash
    during the removal never leaves a half folder under a ``step_N`` name)."""
    for old in step_dirs(out)[:-keep] if keep > 0 else []:
        aside = old.with_name(f".{old.name}.prune-{os.getpid()}")
        os.replace(old, aside)
        shutil.rmtree(aside, ignore_errors=True)
    for stale in Path(out).glob(".step_*.prune-*"):  # left by a crash during an earlier prune
        shutil.rmtree(stale, ignore_errors=True)


def trim_log(out: Path, step: int) -> None:
    """Drop ``log.jsonl`` lines of steps after ``step`` (written after the save a run resumes
    from; the resumed run writes them again)."""
    path = Path(out) / "log.jsonl"
    if not path.is_file():
        return
    keep = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            if json.loads(line).get("step", 0) <= step:
                keep.append(line)
        except ValueError:
            continue  # a line cut by a crash
    write_text_atomic(path, "".join(line + "\n" for line in keep))


__all__ = ["RunLock", "RunLockedError", "has_saves", "newest_complete_save", "prune", "step_dirs", "tidy", "trim_log"]
