"""Crash-safe writes: a folder is built completely under a temporary name, every file fsynced,
then moved into place with one rename, as PyTorch's distributed checkpointing and the Hugging Face
trainer do. A reader therefore sees the previous version or the new one, never a mix.

A ``manifest.json`` written last inside the folder lists every file with its size and SHA-256, so a
save damaged after the fact (a truncated copy, a bad disk) is detected by :func:`verify_manifest`
instead of being loaded.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

MANIFEST = "manifest.json"
PARTIAL = ".partial-"
OLD = ".old-"


_OS_ERROR = re.compile(r"\(os error (\d+)\)")


def as_os_error(exc: BaseException) -> OSError | None:
    """``exc`` as an :class:`OSError` when it reports one, else None. The writers a save calls raise
    their own types for a full disk: safetensors a ``SafetensorError`` ("I/O error: No space left on
    device (os error 28)"), tokenizers a plain ``Exception`` with the same words; the callers of
    :func:`atomic_dir` (training saves, ``average``, ``import-marian``) handle ``OSError`` alone."""
    if isinstance(exc, OSError):
        return exc
    if not isinstance(exc, Exception):
        return None
    found = _OS_ERROR.search(str(exc))
    if found is None:
        return None
    code = int(found.group(1))
    return OSError(code, f"{os.strerror(code)} ({type(exc).__name__}: {str(exc).splitlines()[0][:160]})")


def fsync_path(path: Path) -> None:
    """fsync a file or a directory (directories: where the OS allows it, i.e. not on Windows)."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) if path.is_dir() else os.O_RDONLY
    try:
        fd = os.open(path, flags)
    except OSError:
        if path.is_dir():  # Windows cannot open a directory; its renames are durable enough
            return
        raise
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_text_atomic(path: str | Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) in one rename, after an fsync of the new content.

    Raises:
        OSError: the write failed (a full disk); the message names ``path``, which is unchanged.
    """
    path = Path(path)
    tmp = path.with_name(path.name + PARTIAL + str(os.getpid()))
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)  # a full disk leaves no half-written file beside ``path``
        raise OSError(exc.errno, f"could not write {path} ({exc.strerror or exc})") from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_path(path.parent)


def sha256_file(path: Path) -> str:
    """SHA-256 (hex) of a file's bytes, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_manifest(folder: Path) -> None:
    """List every file of ``folder`` (size in bytes, SHA-256) in ``folder/manifest.json``."""
    files = {
        p.name: {"bytes": p.stat().st_size, "sha256": sha256_file(p)}
        for p in sorted(folder.iterdir())
        if p.is_file() and p.name != MANIFEST
    }
    (folder / MANIFEST).write_text(json.dumps({"files": files}, indent=1), encoding="utf-8")


def verify_manifest(folder: str | Path, check_hashes: bool = True) -> str | None:
    """None when ``folder`` holds every file its manifest lists, at the listed size (and hash);
    otherwise a one-line reason. A folder without a manifest is reported as incomplete."""
    folder = Path(folder)
    try:
        listed = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))["files"]
    except FileNotFoundError:
        return f"{folder}: no {MANIFEST} (incomplete save)"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"{folder}: unreadable {MANIFEST} ({exc})"
    for name, want in listed.items():
        p = folder / name
        if not p.is_file():
            return f"{folder}: {name} is missing"
        if p.stat().st_size != want["bytes"]:
            return f"{folder}: {name} has {p.stat().st_size} bytes, the save wrote {want['bytes']}"
        if check_hashes and sha256_file(p) != want["sha256"]:
            return f"{folder}: {name} differs from what the save wrote (SHA-256 mismatch)"
    return None


def recover(dest: str | Path) -> None:
    """Tidy what an interrupted :func:`atomic_dir` left beside ``dest``: half-written
    ``.partial-*`` folders are removed; an ``.old-*`` folder is put back when ``dest`` itself is
    missing (the crash fell between the two renames of a replacement), else removed."""
    dest = Path(dest)
    parent = dest.parent
    if not parent.is_dir():
        return
    for p in parent.glob(f".{dest.name}{PARTIAL}*"):
        shutil.rmtree(p, ignore_errors=True)
    for p in sorted(parent.glob(f".{dest.name}{OLD}*")):
        if not dest.exists():
            os.replace(p, dest)
        else:
            shutil.rmtree(p, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists (another user's) or cannot tell: keep its folder
    return True


def sweep_stale(parent: str | Path) -> list[Path]:
    """Remove the ``.NAME.partial-PID`` folders in ``parent`` whose process is gone (a save or
    import that was killed); returns what was removed. Folders of a live process are kept."""
    removed = []
    for p in Path(parent).glob(f".*{PARTIAL}*"):
        pid = p.name.rsplit(PARTIAL, 1)[1]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
    return removed


@contextlib.contextmanager
def atomic_dir(dest: str | Path, manifest: bool = True) -> Iterator[Path]:
    """Yield an empty temporary folder beside ``dest``; when the block ends without an error, write
    the manifest, fsync every file, and move the folder to ``dest`` (replacing an existing one).
    On an error (a full disk: ``OSError(ENOSPC)``) the temporary folder is removed, ``dest`` is left
    as it was, and the error propagates; a library's own error type that reports an OS error
    (safetensors' ``SafetensorError``, tokenizers' ``Exception`` on a full disk) propagates as that
    :class:`OSError` (:func:`as_os_error`), so one ``except OSError`` handles every writer.

    Replacing an existing ``dest`` takes two renames (``dest`` → ``.dest.old-PID``, new → ``dest``);
    a crash between them leaves the old folder under its ``.old-`` name, which :func:`recover`
    (called by every later save and by the loaders) puts back.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    recover(dest)
    tmp = dest.parent / f".{dest.name}{PARTIAL}{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        yield tmp
        if manifest:
            write_manifest(tmp)
        for p in tmp.iterdir():
            fsync_path(p)
        fsync_path(tmp)
        old = None
        if dest.exists():
            old = dest.parent / f".{dest.name}{OLD}{os.getpid()}"
            os.replace(dest, old)
        os.replace(tmp, dest)
        fsync_path(dest.parent)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        converted = as_os_error(exc)
        if converted is not None and converted is not exc:
            raise converted from exc
        raise


__all__ = [
    "MANIFEST",
    "as_os_error",
    "atomic_dir",
    "fsync_path",
    "recover",
    "sweep_stale",
    "verify_manifest",
    "write_manifest",
    "write_text_atomic",
]
