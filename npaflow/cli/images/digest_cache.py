"""Verified digests remembered for a bounded time, so back-to-back submits ask the registry once.

Only `ok` answers are kept (a problem is always asked again), keyed by the
image's registry, repository and tag, for NPAFLOW_IMAGE_CACHE_SECONDS (300 by
default; 0 turns it off) in `$XDG_CACHE_HOME/npaflow/image-digests.json`.
A run pins whatever digest the check returned, so a tag moved within the
window launches the digest verified just before it moved.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

from npaflow.images import DIGEST

CACHE_SECONDS_ENV = "NPAFLOW_IMAGE_CACHE_SECONDS"
DEFAULT_SECONDS = 300.0
MAX_ENTRIES = 2000


def cache_file() -> Path:
    """Where verified digests are kept."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "npaflow" / "image-digests.json"


def cache_seconds() -> float:
    """How long a verified digest is trusted without asking again (0: not at all)."""
    raw = os.environ.get(CACHE_SECONDS_ENV, "")
    try:
        return max(0.0, float(raw)) if raw else DEFAULT_SECONDS
    except ValueError:
        return DEFAULT_SECONDS


class DigestCache:
    """The cache file's entries: key -> (digest, verified at, epoch seconds)."""

    def __init__(self, path: Path | None = None, seconds: float | None = None) -> None:
        self.path = path or cache_file()
        self.seconds = cache_seconds() if seconds is None else seconds
        self.entries = self._read() if self.seconds > 0 else {}

    def _read(self) -> dict[str, tuple[str, float]]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # no cache, or a broken one: ask the registry
        now = time.time()
        entries: dict[str, tuple[str, float]] = {}
        for key, value in raw.items() if isinstance(raw, dict) else ():
            if isinstance(value, list) and len(value) == 2 and isinstance(value[0], str):
                digest, at = value[0], value[1]
                if DIGEST.match(digest) and isinstance(at, int | float) and 0 <= now - at < self.seconds:
                    entries[key] = (digest, float(at))
        return entries

    def get(self, key: str) -> str:
        """The digest verified for `key` within the window ("" when none)."""
        found = self.entries.get(key)
        return found[0] if found and time.time() - found[1] < self.seconds else ""

    def put(self, key: str, digest: str) -> None:
        """Remember a verified digest (written by `save`)."""
        if self.seconds > 0:
            self.entries[key] = (digest, time.time())

    def save(self) -> None:
        """Write the file atomically; a cache that cannot be written is only slower."""
        if self.seconds <= 0:
            return
        newest = sorted(self.entries.items(), key=lambda item: item[1][1])[-MAX_ENTRIES:]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=self.path.parent, delete=False, suffix=".tmp") as out:
                json.dump({k: [d, at] for k, (d, at) in newest}, out)
            os.replace(out.name, self.path)
        except OSError:
            return
