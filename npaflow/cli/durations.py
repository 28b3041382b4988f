"""Durations on the command line: `30s`, `15m`, `24h`, `7d` (plain numbers are seconds)."""

from __future__ import annotations

import re
from datetime import timedelta

from npaflow.errors import UsageError

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(flag: str, text: str) -> timedelta:
    """`text` as a duration, for the option named `flag`.

    Raises:
        UsageError: not a positive duration.
    """
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([smhd]?)", text.strip())
    seconds = float(match.group(1)) * _UNITS[match.group(2) or "s"] if match else 0.0
    if seconds <= 0:
        raise UsageError(f"{flag} {text!r}: expected a duration such as 30s, 15m, 24h or 7d")
    return timedelta(seconds=seconds)
