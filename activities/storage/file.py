"""Local files addressed as `file:///abs/path` or plain absolute paths, failing closed.

Only "no such file" is missing: permission denied is `AccessDeniedError`, a
directory where a file is expected is a configuration error, and other I/O
errors are `TransportError` (retried within a deadline).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from activities.files import write_text_atomic
from activities.storage.base import ArtifactMissingError
from npaflow.errors import AccessDeniedError, ConfigurationError, NpaflowError, TransportError

T = TypeVar("T")


def path_of(uri: str) -> Path:
    """Return the local path of a `file://` URI or absolute path.

    Raises:
        ConfigurationError: the URI is relative or not a file URI.
    """
    text = uri.removeprefix("file://")
    if not text.startswith("/"):
        raise ConfigurationError(f"expected an absolute file:// URI or path, got {uri!r}")
    return Path(text)


def classify_file_error(exc: OSError, uri: str) -> NpaflowError:
    """The npaflow error a file-system failure is (never "missing": that is decided by the caller)."""
    if isinstance(exc, PermissionError):
        return AccessDeniedError(f"{uri}: permission denied: the worker cannot read or write it")
    if isinstance(exc, IsADirectoryError):
        return ConfigurationError(f"{uri}: is a directory, expected a file")
    return TransportError(f"{uri}: {exc.strerror or exc}")


async def _in_thread(uri: str, fn: Callable[[], T]) -> T:
    try:
        return await asyncio.to_thread(fn)
    except (FileNotFoundError, NotADirectoryError):
        raise ArtifactMissingError(uri) from None
    except OSError as exc:
        raise classify_file_error(exc, uri) from exc


class FileStorage:
    """Storage on the worker's own file system (the embedded default)."""

    async def read_text(self, uri: str) -> str:
        """Return the file's text.

        Raises:
            ArtifactMissingError: there is no such file.
        """
        path = path_of(uri)
        return await _in_thread(uri, lambda: path.read_text(encoding="utf-8"))

    async def write_text(self, uri: str, text: str, content_type: str = "application/json") -> None:
        """Write atomically: a temp file renamed into place."""
        path = path_of(uri)
        try:
            await asyncio.to_thread(write_text_atomic, path, text)
        except OSError as exc:
            raise classify_file_error(exc, uri) from exc

    async def size(self, uri: str) -> int | None:
        """Return the file's size, or None when there is no such file."""
        path = path_of(uri)
        try:
            return await _in_thread(uri, lambda: path.stat().st_size if path.is_file() else None)
        except ArtifactMissingError:
            return None

    async def list_keys(self, prefix_uri: str) -> list[str]:
        """Return every file below the prefix directory, relative to it, sorted."""
        root = path_of(prefix_uri)

        def walk() -> list[str]:
            if not root.is_dir():
                return []
            return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())

        return await _in_thread(prefix_uri, walk)
