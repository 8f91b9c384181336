"""Text hygiene at the edges: lines split on ``\\n`` only, and invisible format characters removed
before tokenizing.

``str.splitlines()`` also splits on U+2028, U+2029, U+0085, ``\\x0b``, ``\\x0c``, ``\\x1c``–``\\x1e``
and a lone ``\\r``; a corpus line holding one of them would shift every later line against its
translation. sacreBLEU and ``wc -l`` count ``\\n`` only, and so does everything here.

Format characters (Unicode category Cf: the byte-order mark U+FEFF that Windows Notepad writes,
zero-width space U+200B, joiners U+200C/U+200D, direction marks U+200E/U+200F, word joiner U+2060,
bidi controls) draw nothing but would reach the tokenizer as ``[UNK]`` and derail the translation.
"""

from __future__ import annotations

import json
import os
import stat
import unicodedata
from pathlib import Path

MAX_JSON_BYTES = 64 << 20  # a config or tokenizer descriptor; real ones are a few kB (tokenizers: a few MB)


def clean_text(text: str) -> str:
    """``text`` without format characters (category Cf) and with lone surrogates (undecodable bytes
    from a command line) replaced by U+FFFD."""
    if text.isascii():
        return text
    return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text if unicodedata.category(ch) != "Cf")


def split_lines(text: str) -> list[str]:
    """Lines of ``text`` split on ``\\n`` only (a ``\\r`` before it is dropped, as in CRLF files);
    a final newline does not start an extra empty line. A leading byte-order mark is removed."""
    text = text.removeprefix("\ufeff")
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [x[:-1] if x.endswith("\r") else x for x in lines]


def read_lines(path: str | Path) -> list[str]:
    """:func:`split_lines` of a UTF-8 file.

    Raises:
        FileNotFoundError: no such file. ValueError: the file is not UTF-8 (the message names the
            file, the byte and its line).
    """
    with open(path, "rb") as f:
        data = f.read()
    try:
        return split_lines(data.decode("utf-8"))  # no universal-newline translation
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ValueError(
            f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}: {exc.reason}); save it as UTF-8"
        ) from None


def read_aligned(first: str | Path, second: str | Path) -> tuple[list[str], list[str]]:
    """The lines of two files that must be line-aligned (a source and its reference or
    translation).

    Raises:
        ValueError: the line counts differ (the message names both files and counts).
    """
    a, b = read_lines(first), read_lines(second)
    if len(a) != len(b):
        raise ValueError(f"{first} has {len(a)} lines but {second} has {len(b)} (lines are split on \\n only)")
    return a, b


def check_regular_file(path: str | Path, max_bytes: int, inside: str | Path | None = None) -> int:
    """Refuse, before anything is opened, a file that a checkpoint folder names but that could hang
    or flood a reader: a FIFO, a device (``/dev/zero``), a directory, a file larger than
    ``max_bytes``, or (with ``inside``) a path that resolves outside the folder ``inside``
    (an absolute path, ``..``, a symlink pointing elsewhere). Returns the size in bytes.

    Raises:
        FileNotFoundError: no such file. ValueError: any of the above (the message names the file).
    """
    path = Path(path)
    if inside is not None:
        root = Path(inside).resolve()
        if not path.resolve().is_relative_to(root):
            raise ValueError(f"{path}: outside the checkpoint folder {root}; a checkpoint may name only its own files")
    st = os.stat(path)  # follows symlinks: what would be read
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{path}: not a regular file (a FIFO, device or folder is never read)")
    if st.st_size > max_bytes:
        raise ValueError(f"{path}: {st.st_size:,} bytes, more than such a file can be ({max_bytes:,})")
    return st.st_size


def read_json(path: str | Path, max_bytes: int = MAX_JSON_BYTES, inside: str | Path | None = None):
    """Parse a UTF-8 JSON file, refusing before reading one that is not a regular file or is larger
    than ``max_bytes`` (:func:`check_regular_file`, also for ``inside``), and turning a nesting too
    deep for the parser into a ValueError.

    Raises:
        OSError: unreadable. ValueError: not a regular file, outside ``inside``, too large, not
            UTF-8, invalid JSON or nested too deeply (the message names the file).
    """
    path = Path(path)
    check_regular_file(path, max_bytes, inside)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: invalid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise ValueError(f"{path}: JSON nested too deeply") from None


__all__ = ["check_regular_file", "clean_text", "read_aligned", "read_json", "read_lines", "split_lines"]
