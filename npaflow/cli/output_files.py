"""Writing the files a command produces (`init`, `render`): a path that cannot take them is a usage error."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from npaflow.errors import UsageError


def write_files(files: Mapping[Path, str], where: str) -> None:
    """Create each file's directory and write it; `where` names the flag or argument that chose them.

    Raises:
        UsageError: a directory or file could not be made (a file in the way, no permission,
            a read-only or missing filesystem), naming the path and why.
    """
    for path, text in files.items():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as error:
            blocked = str(error.filename or path)
            at = "" if blocked == str(path) else f"{blocked}: "
            raise UsageError(
                f"{where}: cannot write {path}: {at}{error.strerror or error} "
                "(hint: choose a directory you can write, that is not a file)"
            ) from None
