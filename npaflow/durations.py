"""Durations as people write them: `30s`, `15m`, `24h`, `7d` (a plain number is seconds)."""

from __future__ import annotations

import re

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhd]?)")
#: The longest duration anything takes (a century): past it, dates overflow and servers refuse.
MAX_DURATION_SECONDS = 36_500 * 86_400
LIMIT_TEXT = "at most 36500d"


def duration_seconds(text: str) -> float | None:
    """The duration's seconds, or None when `text` is not a positive duration within a century."""
    match = _DURATION.fullmatch(text.strip())
    seconds = float(match.group(1)) * _UNITS[match.group(2) or "s"] if match else 0.0
    return seconds if 0 < seconds <= MAX_DURATION_SECONDS else None


def duration_text(seconds: float) -> str:
    """The largest whole unit that writes `seconds` exactly: 604800 -> `7d`, 90 -> `90s`."""
    for unit, size in sorted(_UNITS.items(), key=lambda item: -item[1]):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"
