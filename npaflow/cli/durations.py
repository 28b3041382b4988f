"""Durations on the command line: `30s`, `15m`, `24h`, `7d` (plain numbers are seconds)."""

from __future__ import annotations

from datetime import timedelta

from npaflow.durations import LIMIT_TEXT, duration_seconds
from npaflow.errors import UsageError


def parse_duration(flag: str, text: str) -> timedelta:
    """`text` as a duration, for the option named `flag`.

    Raises:
        UsageError: not a positive duration, or longer than a century.
    """
    seconds = duration_seconds(text)
    if seconds is None:
        raise UsageError(f"{flag} {text!r}: expected a duration such as 30s, 15m, 24h or 7d ({LIMIT_TEXT})")
    return timedelta(seconds=seconds)
