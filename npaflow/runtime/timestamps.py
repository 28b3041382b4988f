"""The one timestamp format of the ledger (UTC, seconds) and its parsing.

Pure: formatting the current time is the caller's side effect (`activities/clock.py`
on workers, `workflow.now()` in workflows).
"""

from __future__ import annotations

import functools
import re
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


#: TIMESTAMP_FORMAT's shape: parsed only when it fits exactly (`fromisoformat` takes more).
_SHAPE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")


def epoch_seconds(timestamp: str) -> float | None:
    """Seconds since the epoch of a ledger timestamp, or None when it is not one."""
    return _epoch_seconds(timestamp) if isinstance(timestamp, str) else None


@functools.lru_cache(maxsize=4096)
def _epoch_seconds(timestamp: str) -> float | None:
    """Cached: a run's spend is counted again from the same few timestamps on every replay and query.

    `strptime` cost a continued run replaying 2,000 waves a third of a second (deadlock-detector
    territory on a loaded host); `fromisoformat` on the exact shape is ten times cheaper.
    """
    if not _SHAPE.fullmatch(timestamp):
        return None
    try:
        parsed = datetime.fromisoformat(timestamp[:-1])
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC).timestamp()
