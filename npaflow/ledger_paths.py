"""Rules for the path components input chooses (`config.prefix`, `config.bucket`).

Pure string checks, shared by validation (npaflow/spec) and the ledger location
(npaflow/runtime/locations.py), so both refuse the same inputs.
"""

from __future__ import annotations

import re

#: Filesystem limits (Linux NAME_MAX / a conservative PATH_MAX share for the prefix).
MAX_SEGMENT_BYTES = 255
MAX_PREFIX_BYTES = 1024
#: S3 bucket names (AWS rules; MinIO and SeaweedFS accept a superset).
BUCKET_PATTERN = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]\Z")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\\]")

#: The directory beside the runs' ledgers where the stage cache keeps its entries.
CACHE_DIR = ".npaflow-cache"


def root_problem(root: str) -> str:
    """Why `root` cannot be a ledger or cache root ("" when it can): s3://BUCKET[/PREFIX] or absolute."""
    path = root.removeprefix("file://")
    if path.startswith("/") and not _CONTROL.search(path):
        return ""
    if path.startswith("s3://") and not bucket_problem(path.removeprefix("s3://").partition("/")[0]):
        return ""
    return "is not s3://BUCKET/PREFIX or an absolute path (/dir or file:///dir)"


def prefix_problem(prefix: str) -> str:
    """Why `prefix` cannot name a ledger directory under a root ("" when it can)."""
    if not prefix.strip("/"):
        return "is empty"
    if prefix.startswith("/"):
        return "is absolute (it must be relative to the ledger root)"
    if _CONTROL.search(prefix):
        return "contains a control character or a backslash"
    segments = prefix.strip("/").split("/")
    if any(segment in ("", ".", "..") for segment in segments):
        return "contains an empty, '.' or '..' segment (it must stay under the ledger root)"
    if segments[0] == CACHE_DIR:
        return f"starts with {CACHE_DIR}, where the stage cache keeps its entries"
    if any(len(segment.encode()) > MAX_SEGMENT_BYTES for segment in segments):
        return f"has a segment longer than {MAX_SEGMENT_BYTES} bytes"
    if len(prefix.encode()) > MAX_PREFIX_BYTES:
        return f"is longer than {MAX_PREFIX_BYTES} bytes"
    return ""


def bucket_problem(bucket: str) -> str:
    """Why `bucket` is not an S3 bucket name ("" when it is)."""
    name = bucket.removeprefix("s3://").strip("/")
    if BUCKET_PATTERN.fullmatch(name) and ".." not in name:
        return ""
    return "is not an S3 bucket name (3-63 lowercase letters, digits, '.' or '-'; no path)"
