"""Cron expressions as Temporal reads them, refused where a user would read them otherwise.

Temporal takes 5 fields (minute hour day-of-month month day-of-week), 7 (second
first, year last, as Quartz writes them) and 6. Its 6 fields are the 5 plus a
year; Quartz, Spring and many schedulers put seconds first instead, so the
daily `0 0 2 * * *` of those would run on the 2nd of every month at 00:00.
"""

from __future__ import annotations

from npaflow.errors import UsageError

#: The field count whose meaning differs between Temporal and seconds-first schedulers.
_AMBIGUOUS_FIELDS = 6


def check_cron(expression: str) -> None:
    """Refuse a cron whose fields another scheduler would read differently.

    Raises:
        UsageError: a 6-field cron, with the 5- and 7-field ways to write it.
    """
    fields = expression.split()
    if len(fields) != _AMBIGUOUS_FIELDS or expression.lstrip().startswith("@"):
        return
    five, seconds = " ".join(fields[1:]), " ".join(fields)
    raise UsageError(
        f"--cron {expression!r} has 6 fields, which Temporal reads as minute hour day month weekday "
        f"YEAR, not seconds first as Quartz and Spring do; write 5 fields ('{five}' if the first was "
        f"seconds) or 7, seconds first and year last ('{seconds} *')"
    )
