"""The storage interface activities use for artifacts, decisions, triggers and ledgers.

Every read is bounded: it returns at most `max_bytes` (a larger object is an
error, found by reading at most one byte past the cap), and local reads refuse
anything that is not a regular file (devices, FIFOs, sockets) before reading.
Listings stop at `limit` keys. The caps are documented in docs/spec-reference.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol

from npaflow.cache import ObjectFacts
from npaflow.errors import ConfigurationError

#: Decision artifacts are small JSON objects; a gigabyte one is a bug, not a decision.
MAX_DECISION_BYTES = 1024 * 1024
#: A spec read through spec_uri (npaflow/document/yaml_source.py caps the text it parses).
MAX_SPEC_READ_BYTES = 32 * 1024 * 1024
#: runtime.json of a very long run (thousands of waves) still fits well below this.
MAX_LEDGER_BYTES = 512 * 1024 * 1024
#: Launch receipts and other small records.
MAX_RECORD_BYTES = 1024 * 1024
#: Keys a trigger or an output check lists under one prefix before it stops counting.
MAX_LISTED_KEYS = 100_000
#: Default for reads that name no cap.
DEFAULT_MAX_BYTES = MAX_RECORD_BYTES


class ArtifactMissingError(FileNotFoundError):
    """The object (or file) does not exist."""


class ArtifactTooLargeError(ConfigurationError):
    """The object is larger than what this read may load (never retried)."""

    def __init__(self, uri: str, limit: int) -> None:
        super().__init__(f"{uri}: larger than {limit:,} bytes, the most this read loads")
        self.uri = uri
        self.limit = limit


class NotTextError(ConfigurationError):
    """The object is not UTF-8 text (a deterministic property of its bytes: never retried)."""


class NotARegularFileError(ConfigurationError):
    """A local path names a device, FIFO, socket or directory: it is never opened for reading."""


class TextWrite(NamedTuple):
    """One object of a `write_texts` batch."""

    uri: str
    text: str
    content_type: str = "application/json"


class Storage(Protocol):
    """Reads and writes objects addressed by URI."""

    async def read_text(self, uri: str, *, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
        """Return the object's text (at most `max_bytes`), or raise ArtifactMissingError."""
        ...

    async def write_text(self, uri: str, text: str, content_type: str = "application/json") -> str:
        """Create or replace the object; return its new version (see `version`)."""
        ...

    async def write_texts(self, writes: Sequence[TextWrite]) -> list[str]:
        """Write each in order (one lands before the next begins); return their versions."""
        ...

    async def version(self, uri: str) -> str | None:
        """A token that changes whenever the object changes; None when it does not exist."""
        ...

    async def size(self, uri: str) -> int | None:
        """Return the object's size in bytes, or None when it does not exist."""
        ...

    async def list_keys(self, prefix_uri: str, *, limit: int = MAX_LISTED_KEYS) -> list[str]:
        """Return the keys under the prefix (all pages), at most `limit` of them."""
        ...

    async def list_facts(self, prefix_uri: str, *, limit: int = MAX_LISTED_KEYS) -> list[ObjectFacts]:
        """Each object under the prefix (key relative to it) with its facts, at most `limit`, sorted."""
        ...

    async def facts(self, uri: str) -> ObjectFacts | None:
        """One object's size, checksum (ETag) and version id; None when it does not exist."""
        ...

    async def delete(self, uri: str) -> bool:
        """Delete one object; False when there was none."""
        ...

    async def copy(self, source_uri: str, target_uri: str) -> None:
        """Copy one object within this store (server-side where the store can), replacing the target.

        Raises:
            ArtifactMissingError: the source does not exist.
        """
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
