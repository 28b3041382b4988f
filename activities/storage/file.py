"""Local files addressed as `file:///abs/path` or plain absolute paths."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from activities.storage.base import ArtifactMissingError
from npaflow.errors import ConfigurationError


def path_of(uri: str) -> Path:
    """Return the local path of a `file://` URI or absolute path.

    Raises:
        ConfigurationError: the URI is relative or not a file URI.
    """
    text = uri.removeprefix("file://")
    if not text.startswith("/"):
        raise ConfigurationError(f"expected an absolute file:// URI or path, got {uri!r}")
    return Path(text)


class FileStorage:
    """Storage on the worker's own file system (the embedded default)."""

    async def read_text(self, uri: str) -> str:
        """Return the file's text."""
        path = path_of(uri)
        try:
            return await asyncio.to_thread(path.read_text, encoding="utf-8")
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise ArtifactMissingError(uri) from None

    async def write_text(self, uri: str, text: str, content_type: str = "application/json") -> None:
        """Write atomically: a temp file renamed into place."""
        await asyncio.to_thread(_write_atomic, path_of(uri), text)

    async def size(self, uri: str) -> int | None:
        """Return the file's size, or None."""
        path = path_of(uri)
        return path.stat().st_size if path.is_file() else None

    async def list_keys(self, prefix_uri: str) -> list[str]:
        """Return every file below the prefix directory, relative to it, sorted."""
        root = path_of(prefix_uri)
        if not root.is_dir():
            return []
        return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)
