"""The CLI's clock, as the ledger writes time: what a status question counts running spend up to."""

from __future__ import annotations

from datetime import UTC, datetime

from npaflow.runtime.timestamps import TIMESTAMP_FORMAT


def utc_now_text() -> str:
    """Now, as a ledger timestamp (the `status` query's `now`: a running job's spend so far)."""
    return datetime.now(UTC).strftime(TIMESTAMP_FORMAT)
