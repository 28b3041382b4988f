"""How a fan-out group ends: at least `minSuccess` of its members succeeded, or it failed."""

from __future__ import annotations

import math

from npaflow.fanout.models import MemberRow, MemberStatus

#: Failed members a group's error names before it says how many more there are.
NAMED_FAILURES = 10


def allowed_failures(total: int, min_success: float) -> int:
    """Members that may fail with the group still succeeding (0 with minSuccess 1.0)."""
    return math.floor(total * (1.0 - min_success) + 1e-9)


def group_error(group: str, members: list[MemberRow], min_success: float, name: str, cause: str = "") -> str:
    """The group's failure ("" when enough members succeeded): the share, the failed members, the way on.

    `cause`: the first failed batch's own error (an exit code, a budget spent, no capacity), so
    the run's error says why, not only which members.
    """
    total = len(members)
    failed = [m for m in members if m.status is MemberStatus.FAILED]
    unfinished = [m for m in members if not m.ok()]
    if len(unfinished) <= allowed_failures(total, min_success):
        return ""
    named = ", ".join(f"{m.key} (item {m.index}: {_short(m)})" for m in failed[:NAMED_FAILURES])
    more = f" and {len(failed) - NAMED_FAILURES} more" if len(failed) > NAMED_FAILURES else ""
    skipped = total - len(failed) - (total - len(unfinished))
    return (
        f"group {group}: {total - len(unfinished)} of {total} {name} members succeeded, under "
        f"forEach.minSuccess {min_success:g}; failed: {named or 'none'}{more}"
        + (f"; {skipped} not run" if skipped else "")
        + (f"; the first failed batch: {cause}" if cause else "")
        + "; fix them and `npaflow resume` relaunches only the members that did not succeed"
    )


def _short(member: MemberRow) -> str:
    text = str(member.item)
    return text if len(text) <= 60 else text[:57] + "..."
