"""Local files addressed as `file:///abs/path` or plain absolute paths, failing closed.

Only "no such file" is missing: permission denied is `AccessDeniedError`, errors
that say the path itself is wrong (a name too long, a loop, not a regular file)
are configuration errors, and only errors a retry can fix (I/O, a full or stale
file system) are `TransportError`. Every call runs on this storage's own small
thread pool with a deadline, so a path that hangs (a stuck network mount) ties
up that pool only, never the ledger's or the event loop.
"""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
import stat
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from activities.files import write_text_atomic
from activities.storage.base import (
    DEFAULT_MAX_BYTES,
    MAX_LISTED_KEYS,
    ArtifactMissingError,
    ArtifactTooLargeError,
    NotARegularFileError,
    NotTextError,
    TextWrite,
)
from activities.storage.file_digests import DigestMemo
from npaflow.cache import ObjectFacts
from npaflow.errors import AccessDeniedError, ConfigurationError, NpaflowError, TransportError

T = TypeVar("T")

#: OS errors a later try can get past; every other one describes the path or the request.
TRANSIENT_ERRNOS = frozenset(
    {
        errno.EIO,
        errno.EAGAIN,
        errno.EBUSY,
        errno.EINTR,
        errno.ENOSPC,
        errno.EDQUOT,
        errno.ETIMEDOUT,
        errno.ESTALE,
        errno.ENOMEM,
        errno.EMFILE,
        errno.ENFILE,
        errno.ECONNRESET,
        errno.ECONNREFUSED,
        errno.EHOSTUNREACH,
        errno.ENETUNREACH,
        errno.ENOLCK,
    }
)
#: A file-system call taking longer than this counts as a transport failure (retried).
CALL_DEADLINE_SECONDS = 120.0


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
    if exc.errno in TRANSIENT_ERRNOS:
        return TransportError(f"{uri}: {exc.strerror or exc}")
    return ConfigurationError(f"{uri}: {exc.strerror or exc} (errno {exc.errno})")


def read_bounded(path: Path, uri: str, max_bytes: int) -> str:
    """Read a regular file's text, at most `max_bytes` (one byte more is read to tell).

    Raises:
        NotARegularFileError: a device, FIFO, socket or directory (checked before opening,
            and again on the open descriptor).
        ArtifactTooLargeError: the file holds more than `max_bytes`.
    """
    _require_regular(os.stat(path).st_mode, uri)
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    with os.fdopen(descriptor, "rb") as file:
        _require_regular(os.fstat(descriptor).st_mode, uri)
        data = file.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ArtifactTooLargeError(uri, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotTextError(f"{uri}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _require_regular(mode: int, uri: str) -> None:
    if not stat.S_ISREG(mode):
        kind = (
            "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
        )
        raise NotARegularFileError(f"{uri}: is {kind}; only regular files are read")


def _walk(root: Path, limit: int) -> list[str]:
    if not root.is_dir():
        return []
    keys: list[str] = []
    for directory, _, files in os.walk(root):
        for name in files:
            path = Path(directory) / name
            if path.is_file():
                keys.append(str(path.relative_to(root)))
                if len(keys) >= limit:
                    return sorted(keys)
    return sorted(keys)


def _version(path: Path) -> str | None:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return f"{info.st_ino}:{info.st_mtime_ns}:{info.st_size}"


class FileStorage:
    """Storage on the worker's own file system (the embedded default)."""

    def __init__(self, *, threads: int = 4, name: str = "files") -> None:
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=f"npaflow-{name}")
        self._digests = DigestMemo()  # in memory only: a new process trusts none

    async def _call(self, uri: str, fn: Callable[[], T]) -> T:
        loop = asyncio.get_running_loop()
        try:
            return await asyncio.wait_for(loop.run_in_executor(self._pool, fn), CALL_DEADLINE_SECONDS)
        except TimeoutError:
            raise TransportError(
                f"{uri}: no answer from the file system in {CALL_DEADLINE_SECONDS:g}s"
            ) from None
        except (FileNotFoundError, NotADirectoryError):
            raise ArtifactMissingError(uri) from None
        except OSError as exc:
            raise classify_file_error(exc, uri) from exc

    async def read_text(self, uri: str, *, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
        """Return the file's text.

        Raises:
            ArtifactMissingError: there is no such file.
        """
        path = path_of(uri)
        return await self._call(uri, lambda: read_bounded(path, uri, max_bytes))

    async def write_text(self, uri: str, text: str, content_type: str = "application/json") -> str:
        """Write atomically (a temp file renamed into place); return the new version."""
        return (await self.write_texts([TextWrite(uri, text, content_type)]))[0]

    async def write_texts(self, writes: Sequence[TextWrite]) -> list[str]:
        """Write each atomically, in order, in one trip to the pool (a ledger export's files).

        Four trips per export were most of the export's thread hand-offs.
        """
        if not writes:
            return []

        def write_all() -> list[str]:
            versions = []
            for uri, text, _ in writes:
                path = path_of(uri)
                write_text_atomic(path, text)
                versions.append(_version(path) or "")
            return versions

        try:
            return await self._call(writes[-1].uri, write_all)
        except ArtifactMissingError:
            raise TransportError(f"{writes[-1].uri}: a directory on the way vanished while writing") from None

    async def version(self, uri: str) -> str | None:
        """Inode, modification time and size: any rewrite changes it."""
        path = path_of(uri)
        return await self._call(uri, lambda: _version(path))

    async def size(self, uri: str) -> int | None:
        """Return the file's size, or None when there is no such file."""
        path = path_of(uri)
        try:
            return await self._call(uri, lambda: path.stat().st_size if path.is_file() else None)
        except ArtifactMissingError:
            return None

    async def facts(self, uri: str) -> ObjectFacts | None:
        """Size and the sha256 of the bytes (a copy checks alike; hashed once per file version)."""
        path = path_of(uri)
        try:
            return await self._call(uri, lambda: self._digests.facts(path, ""))
        except ArtifactMissingError:
            return None

    async def list_facts(self, prefix_uri: str, *, limit: int = MAX_LISTED_KEYS) -> list[ObjectFacts]:
        """Each file below the prefix directory with its size and sha256, sorted by key."""
        root = path_of(prefix_uri)

        def read_all() -> list[ObjectFacts]:
            listed = (self._digests.facts(root / key, key) for key in _walk(root, limit))
            return [facts for facts in listed if facts is not None]

        return await self._call(prefix_uri, read_all)

    async def delete(self, uri: str) -> bool:
        """Remove what the URI names (a file, a FIFO or socket, a directory tree); False when nothing."""
        path = path_of(uri)

        def unlink() -> bool:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
                return True
            if not path.exists() and not path.is_symlink():
                return False
            path.unlink()
            return True

        try:
            return await self._call(uri, unlink)
        except ArtifactMissingError:
            return False

    async def copy(self, source_uri: str, target_uri: str) -> None:
        """Copy the file's bytes to a temp file beside the target, then rename it into place."""
        source, target = path_of(source_uri), path_of(target_uri)

        def copy() -> None:
            _require_regular(os.stat(source).st_mode, source_uri)
            target.parent.mkdir(parents=True, exist_ok=True)
            scratch = target.with_name(f".{target.name}.{os.getpid()}.copy")
            shutil.copyfile(source, scratch)
            os.replace(scratch, target)

        await self._call(source_uri, copy)

    async def list_keys(self, prefix_uri: str, *, limit: int = MAX_LISTED_KEYS) -> list[str]:
        """Return the files below the prefix directory (at most `limit`), relative to it, sorted."""
        root = path_of(prefix_uri)
        return await self._call(prefix_uri, lambda: _walk(root, limit))
