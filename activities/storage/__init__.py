"""Storage adapters: local files and S3, chosen by URI scheme."""

from __future__ import annotations

from activities.storage.base import (
    MAX_DECISION_BYTES,
    MAX_LEDGER_BYTES,
    MAX_LISTED_KEYS,
    MAX_RECORD_BYTES,
    MAX_SPEC_READ_BYTES,
    ArtifactMissingError,
    ArtifactTooLargeError,
    NotARegularFileError,
    NotTextError,
    Storage,
    TextWrite,
    has_content,
    join_uri,
)
from activities.storage.file import FileStorage, path_of
from activities.storage.s3 import S3Storage, split_s3_uri


class StorageRouter:
    """Dispatches each URI to the adapter for its scheme.

    Paths a spec names (specs, decisions, triggers, outputs) and the run's own
    ledger use separate local pools, so no number of hung user paths can stall a
    ledger write or another run's launch.
    """

    def __init__(self, s3: S3Storage | None = None) -> None:
        self.file = FileStorage(name="user-files")
        self.ledger_file = FileStorage(name="ledger-files")
        self.s3 = s3 or S3Storage()

    def for_uri(self, uri: str) -> Storage:
        """Return the adapter that serves `uri` (a path named by a spec or a request)."""
        return self.s3 if uri.startswith("s3://") else self.file

    def for_ledger(self, uri: str) -> Storage:
        """Return the adapter that serves a run's ledger files."""
        return self.s3 if uri.startswith("s3://") else self.ledger_file


__all__ = [
    "MAX_DECISION_BYTES",
    "MAX_LEDGER_BYTES",
    "MAX_LISTED_KEYS",
    "MAX_RECORD_BYTES",
    "MAX_SPEC_READ_BYTES",
    "ArtifactMissingError",
    "ArtifactTooLargeError",
    "FileStorage",
    "NotARegularFileError",
    "NotTextError",
    "S3Storage",
    "Storage",
    "StorageRouter",
    "TextWrite",
    "has_content",
    "join_uri",
    "path_of",
    "split_s3_uri",
]
