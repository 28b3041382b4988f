"""The one timestamp format of the ledger (UTC, seconds) and its parsing.

Pure: formatting the current time is the caller's side effect (`activities/clock.py`
on workers, `workflow.now()` in workflows).
"""

from __future__ import annotations

from datetime import UTC, datetime

TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def clock_reading(asked: str, floor: datetime) -> str:
    """The `now` a status answer counts running spend to: the asker's clock, never before `floor`.

    A query runs on the workflow's last task time (`floor`), which stands still while a
    job runs; the asker passes its own clock so a running attempt's spend grows. An
    unreadable or earlier reading falls back to `floor`.
    """
    asked_at = epoch_seconds(asked)
    if asked_at is None or asked_at < floor.timestamp():
        return floor.astimezone(UTC).strftime(TIMESTAMP_FORMAT)
    return asked


def epoch_seconds(timestamp: str) -> float | None:
    """Seconds since the epoch of a ledger timestamp, or None when it is not one."""
    try:
        parsed = datetime.strptime(timestamp, TIMESTAMP_FORMAT)
    except (TypeError, ValueError):
        return None
    return parsed.replace(tzinfo=UTC).timestamp()
