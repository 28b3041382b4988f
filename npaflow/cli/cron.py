"""Cron expressions as Temporal reads them, refused where a user would read them otherwise.

Temporal takes 5 fields (minute hour day-of-month month day-of-week), 7 (second
first, year last, as Quartz writes them) and 6. Its 6 fields are the 5 plus a
year; Quartz, Spring and many schedulers put seconds first instead, so the
daily `0 0 2 * * *` of those would run on the 2nd of every month at 00:00.
A leading `CRON_TZ=ZONE` (or `TZ=ZONE`) names the time zone, as in cronie.
"""

from __future__ import annotations

import re
import zoneinfo

from npaflow.errors import UsageError

#: The field count whose meaning differs between Temporal and seconds-first schedulers.
_AMBIGUOUS_FIELDS = 6
#: The five calendar fields and the numbers each can hold (a weekday of 7 is Sunday to some).
_RANGES = (("minute", 0, 59), ("hour", 0, 23), ("day-of-month", 1, 31), ("month", 1, 12), ("weekday", 0, 7))
#: A list entry that is only numbers: `5`, `1-5`, `*/15`, `10-40/5` (names, `L`, `#` are left to Temporal).
_NUMERIC = re.compile(r"(\*|\d+(-\d+)?)(/\d+)?")
#: A leading time zone, as Temporal takes it: `CRON_TZ=Europe/Paris 0 2 * * *`.
_ZONED = re.compile(r"\s*((?:CRON_TZ|TZ)=(\S*)\s+)(.*)", re.DOTALL)


def check_cron(expression: str) -> None:
    """Refuse a cron whose fields another scheduler would read differently.

    Raises:
        UsageError: a 6-field cron, with the 5- and 7-field ways to write it.
    """
    prefix, body = "", expression
    zoned = _ZONED.fullmatch(expression)
    if zoned is not None:
        _check_zone(expression, zoned.group(2))
        prefix, body = f"{zoned.group(1).strip()} ", zoned.group(3)
    fields = body.split()
    if body.lstrip().startswith("@"):
        return
    _check_ranges(expression, fields)
    if len(fields) != _AMBIGUOUS_FIELDS:
        return
    five, seconds = prefix + " ".join(fields[1:]), prefix + " ".join(fields)
    raise UsageError(
        f"--cron {expression!r} has 6 fields, which Temporal reads as minute hour day month weekday "
        f"YEAR, not seconds first as Quartz and Spring do; write 5 fields ('{five}' if the first was "
        f"seconds) or 7, seconds first and year last ('{seconds} *')"
    )


def _check_zone(expression: str, zone: str) -> None:
    """Refuse a zone the IANA database does not name (left to the server where there is no database)."""
    known = zoneinfo.available_timezones()
    if known and zone not in known:
        raise UsageError(
            f"--cron {expression!r}: unknown time zone {zone!r}; give an IANA name such as "
            "'Europe/Paris' or 'America/New_York' (without the prefix, the cron is in UTC)"
        )


def _check_ranges(expression: str, fields: list[str]) -> None:
    """Refuse a number outside its field's range, naming the field.

    The server says only that such a string "does not have 5-7 fields".
    """
    calendar = fields if len(fields) == len(_RANGES) else fields[1:6] if len(fields) == 7 else []
    for field, (name, low, high) in zip(calendar, _RANGES, strict=False):
        for entry in field.split(","):
            if not _NUMERIC.fullmatch(entry):
                continue
            numbers = [int(n) for n in re.findall(r"\d+", entry.split("/")[0])]
            wrong = next((n for n in numbers if not low <= n <= high), None)
            if wrong is not None:
                raise UsageError(
                    f"--cron {expression!r}: {name} {wrong} is outside {low}-{high} (the fields are "
                    "minute hour day-of-month month weekday; e.g. '0 2 * * *' is 02:00 every day)"
                )
