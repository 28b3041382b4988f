"""Storage adapters: local files and S3, chosen by URI scheme."""

from __future__ import annotations

from activities.storage.base import ArtifactMissingError, Storage, has_content, join_uri
from activities.storage.file import FileStorage, path_of
from activities.storage.s3 import S3Storage, split_s3_uri


class StorageRouter:
    """Dispatches each URI to the adapter for its scheme."""

    def __init__(self, s3: S3Storage | None = None) -> None:
        self.file = FileStorage()
        self.s3 = s3 or S3Storage()

    def for_uri(self, uri: str) -> Storage:
        """Return the adapter that serves `uri`."""
        return self.s3 if uri.startswith("s3://") else self.file


__all__ = [
    "ArtifactMissingError",
    "FileStorage",
    "S3Storage",
    "Storage",
    "StorageRouter",
    "has_content",
    "join_uri",
    "path_of",
    "split_s3_uri",
]
