"""Where a stage-cache entry lives: `<cache root>/<scope>/<key hex>.json`, one object per key.

The scope (default: the spec's `metadata.name`, `submit --cache-scope` to share
or isolate) becomes one path segment; a name that is not a safe segment is
rewritten and given a short hash of itself, so two scopes never share a directory.
"""

from __future__ import annotations

import hashlib
import re

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
MAX_SCOPE_SEGMENT = 100


def scope_segment(scope: str) -> str:
    """The scope as one safe path segment (unchanged when it already is one)."""
    cleaned = _UNSAFE.sub("-", scope).strip(".-") or "scope"
    if cleaned == scope and len(scope) <= MAX_SCOPE_SEGMENT:
        return scope
    digest = hashlib.sha256(scope.encode("utf-8")).hexdigest()[:12]
    return f"{cleaned[: MAX_SCOPE_SEGMENT - 13]}-{digest}"


def scope_uri(cache_root: str, scope: str) -> str:
    """The prefix that holds one scope's entries."""
    return f"{cache_root.rstrip('/')}/{scope_segment(scope)}/"


def entry_uri(cache_root: str, scope: str, key: str) -> str:
    """The object that holds the entry of `key` (`sha256:<hex>`)."""
    return f"{scope_uri(cache_root, scope)}{key.removeprefix('sha256:')}.json"


def key_record_uri(entry: str) -> str:
    """Beside an entry: the components of its key, written at every miss (for `cache explain`)."""
    directory, _, name = entry.rpartition("/")
    return f"{directory}/{KEYS_DIR}/{name}"


#: The subdirectory of a scope holding the key records of misses.
KEYS_DIR = "keys"
