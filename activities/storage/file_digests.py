"""A file's content evidence: its sha256, remembered only while nothing the kernel tracks changed.

The memo lives in one process's memory (a restarted worker trusts none of it),
keyed by everything a write changes (device, inode, size, mtime and ctime in ns),
and skips files changed within a timestamp tick of their hashing (git's racily
clean), so metadata restored by `cp -p`, `rsync -t`, `tar -x` or `touch -r` never
keeps a stale digest.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from pathlib import Path

from npaflow.cache import ObjectFacts

#: Files whose sha256 is remembered per stat identity, so unchanged inputs are not hashed again.
MAX_REMEMBERED_DIGESTS = 10_000
#: A file changed this close to the moment it was hashed may change again with every stat field
#: the same (timestamps tick coarsely: a jiffy on ext4, 2 s on FAT): its digest is not remembered.
RACY_NANOSECONDS = 2_000_000_000


def stat_identity(info: os.stat_result) -> str:
    """Everything the kernel changes on a write: device, inode, size, mtime and ctime (ns).

    ctime cannot be set by any user call (`touch -r`, `cp -p`, `rsync -t` and `tar -x`
    restore mtime, and moving it back moves ctime forward), so a rewrite that restores
    size and mtime still changes the identity.
    """
    return f"{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"


def racily_clean(info: os.stat_result, hashed_at_ns: int) -> bool:
    """True when the file changed within a timestamp tick of its hashing (git's racy-clean test)."""
    return hashed_at_ns - max(info.st_mtime_ns, info.st_ctime_ns) < RACY_NANOSECONDS


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1024 * 1024), b""):
            digest.update(block)
    return digest.hexdigest()


class DigestMemo:
    """Each file's sha256 by path and stat identity, hashed again whenever either moved."""

    def __init__(self) -> None:
        self.known: dict[tuple[str, str], str] = {}

    def facts(self, path: Path, key: str) -> ObjectFacts | None:
        """Size and sha256; a remembered digest only for an identical, not racily clean stat."""
        try:
            info = os.stat(path)
        except FileNotFoundError:
            return None
        if not stat.S_ISREG(info.st_mode):
            return None
        identity = (str(path), stat_identity(info))
        digest = self.known.get(identity)
        if digest is None:
            hashed_at = time.time_ns()
            digest = _sha256(path)
            after = os.stat(path)
            if stat_identity(after) == identity[1] and not racily_clean(after, hashed_at):
                if len(self.known) >= MAX_REMEMBERED_DIGESTS:
                    self.known.clear()
                self.known[identity] = digest
        return ObjectFacts(key=key, size=info.st_size, etag=f"sha256:{digest}")
