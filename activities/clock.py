"""Wall-clock timestamps for activities, in the ledger's format."""

from __future__ import annotations

import time

from npaflow.runtime.timestamps import TIMESTAMP_FORMAT


def utc_now() -> str:
    """UTC ISO-8601 with second precision and a Z suffix (reference §6.6)."""
    return time.strftime(TIMESTAMP_FORMAT, time.gmtime())


def utc_from_epoch(epoch: float) -> str:
    """An epoch timestamp in the ledger's format."""
    return time.strftime(TIMESTAMP_FORMAT, time.gmtime(epoch))
