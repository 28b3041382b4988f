"""Reading a spec, catalog or history file: a regular file of UTF-8 text, within a size bound.

`Path.read_text` would wait forever on a FIFO, read `/dev/zero` until memory
runs out, and call a Latin-1 file "not found"; every refusal here names the file,
what is wrong with it and the fix. `-` is standard input (`envsubst < t.yaml |
npaflow submit -`), read once however often a command asks for it.
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path

from npaflow.document.yaml_source import MAX_SPEC_BYTES
from npaflow.errors import SpecError, SpecIssue


def read_document(path: str | Path, what: str = "workflow spec", max_bytes: int = MAX_SPEC_BYTES) -> str:
    """The file's text.

    Raises:
        SpecError: the file is missing, unreadable, not a regular file, too large, or not UTF-8.
    """
    try:
        stdin = str(path) == STDIN
        data = _read_stdin(what, max_bytes) if stdin else _read_regular(Path(path), what, max_bytes)
    except FileNotFoundError:
        raise _refusal(path, f"{what} not found", "check the path") from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise _refusal(
            path, f"{what} cannot be read: {reason}", "check the path and its permissions"
        ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - data.rfind(b"\n", 0, exc.start)
        raise _refusal(
            path,
            f"{what} is not UTF-8 text (byte 0x{data[exc.start]:02x} cannot be decoded)",
            "save the file as UTF-8",
            (line, column),
        ) from None


#: The path that names standard input.
STDIN = "-"
_stdin: list[bytes] = []  # what standard input held, once read


def _read_stdin(what: str, max_bytes: int) -> bytes:
    """Standard input, read once (a command may read its spec twice); bounded like a file."""
    if not _stdin:
        _stdin.append(sys.stdin.buffer.read(max_bytes + 1))
    data = _stdin[0]
    if len(data) > max_bytes:
        raise _refusal(STDIN, f"{what} on standard input is past {max_bytes // 2**20} MiB", "split it")
    return data


def _read_regular(path: Path, what: str, max_bytes: int) -> bytes:
    """At most `max_bytes` + 1 bytes of a regular file; anything else is refused before opening."""
    facts = path.stat()
    mode = facts.st_mode
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device"
        raise _refusal(path, f"{what} is {kind}, not a file", "name a regular file")
    with path.open("rb") as file:
        data = file.read(max_bytes + 1)
    if len(data) > max_bytes:
        size = max(facts.st_size, len(data)) / 2**20
        raise _refusal(
            path,
            f"{what} is {size:.1f} MiB; at most {max_bytes // 2**20} MiB is read",
            "split it into smaller files",
        )
    return data


def _refusal(path: str | Path, message: str, hint: str, at: tuple[int, int] = (0, 0)) -> SpecError:
    return SpecError([SpecIssue(file=str(path), line=at[0], column=at[1], message=message, hint=hint)])
