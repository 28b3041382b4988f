"""Text from outside (a job's decision file, an object key) made safe to print on a terminal.

A job decides what its decision artifact says, and anyone who can write to a watched
prefix names its objects; printed as is, an escape sequence in either would retitle,
recolour or rewrite the reader's terminal, and a bidi override would make a line
read differently from what it says. The ledger keeps such values exactly as read;
only what people are shown is escaped.
"""

from __future__ import annotations

import re

#: C0 controls but newline and tab, DEL, C1 controls, and the bidi overrides and isolates.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    r"""`text` with each control character written as its escape (`\x1b`), lines and tabs kept."""
    return _UNPRINTABLE.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


def clipped(text: str, limit: int) -> str:
    """`text`, or its first `limit` characters and how long it was: a free-text field's bound."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters, clipped)"
