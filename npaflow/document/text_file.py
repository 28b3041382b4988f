"""Reading a spec or catalog file: a regular file of UTF-8 text, within the size any spec needs.

`Path.read_text` would wait forever on a FIFO, read `/dev/zero` until memory
runs out, and call a Latin-1 file "not found"; every refusal here names the file,
what is wrong with it and the fix.
"""

from __future__ import annotations

import stat
from pathlib import Path

from npaflow.document.yaml_source import MAX_SPEC_BYTES
from npaflow.errors import SpecError, SpecIssue


def read_document(path: str | Path, what: str = "workflow spec") -> str:
    """The file's text.

    Raises:
        SpecError: the file is missing, unreadable, not a regular file, too large, or not UTF-8.
    """
    try:
        data = _read_regular(Path(path), what)
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


def _read_regular(path: Path, what: str) -> bytes:
    """At most MAX_SPEC_BYTES + 1 bytes of a regular file; anything else is refused before opening."""
    mode = path.stat().st_mode
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device"
        raise _refusal(path, f"{what} is {kind}, not a file", f"name the {what}'s YAML file")
    with path.open("rb") as file:
        data = file.read(MAX_SPEC_BYTES + 1)
    if len(data) > MAX_SPEC_BYTES:
        raise _refusal(
            path,
            f"{what} is larger than {MAX_SPEC_BYTES // 2**20} MiB",
            "split the workflow into smaller specs",
        )
    return data


def _refusal(path: str | Path, message: str, hint: str, at: tuple[int, int] = (0, 0)) -> SpecError:
    return SpecError([SpecIssue(file=str(path), line=at[0], column=at[1], message=message, hint=hint)])
