"""The one timestamp format of the ledger (UTC, seconds) and its parsing.

Pure: formatting the current time is the caller's side effect (`activities/clock.py`
on workers, `workflow.now()` in workflows).
"""

from __future__ import annotations

from datetime import UTC, datetime

TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def epoch_seconds(timestamp: str) -> float | None:
    """Seconds since the epoch of a ledger timestamp, or None when it is not one."""
    try:
        parsed = datetime.strptime(timestamp, TIMESTAMP_FORMAT)
    except (TypeError, ValueError):
        return None
    return parsed.replace(tzinfo=UTC).timestamp()
