"""Wall-clock timestamps for activities, in the ledger's format."""

from __future__ import annotations

import time


def utc_now() -> str:
    """UTC ISO-8601 with second precision and a Z suffix (reference §6.6)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
