"""The storage interface activities use for artifacts, decisions, triggers and ledgers."""

from __future__ import annotations

from typing import Protocol


class ArtifactMissingError(FileNotFoundError):
    """The object (or file) does not exist."""


class Storage(Protocol):
    """Reads and writes objects addressed by URI."""

    async def read_text(self, uri: str) -> str:
        """Return the object's text, or raise ArtifactMissingError."""
        ...

    async def write_text(self, uri: str, text: str, content_type: str = "application/json") -> None:
        """Create or replace the object."""
        ...

    async def size(self, uri: str) -> int | None:
        """Return the object's size in bytes, or None when it does not exist."""
        ...

    async def list_keys(self, prefix_uri: str) -> list[str]:
        """Return every key under the prefix (all pages)."""
        ...


async def has_content(storage: Storage, uri: str) -> bool:
    """True when a declared output exists: a prefix needs one non-empty object (reference §6.4.6)."""
    if uri.endswith("/"):
        for key in await storage.list_keys(uri):
            if (await storage.size(join_uri(uri, key))) or 0:
                return True
        return False
    return ((await storage.size(uri)) or 0) > 0


def join_uri(prefix_uri: str, key: str) -> str:
    """Join a prefix URI and a key relative to it."""
    return prefix_uri.rstrip("/") + "/" + key.lstrip("/")
