"""Integers spelled in plain ASCII digits, the only ones a spec, a URL or a header may use.

Why not `str.isdigit()`: it is True for '²', '①' and other Unicode digits that
`int()` then refuses with a ValueError, so a check built on it lets hostile text
through to a crash instead of to a clear refusal.
"""

from __future__ import annotations

import re

_UNSIGNED = re.compile(r"[0-9]+")
_SIGNED = re.compile(r"-?[0-9]+")


def plain_int(text: str, *, signed: bool = False) -> int | None:
    """The integer `text` spells in ASCII digits (a leading '-' when `signed`), else None."""
    pattern = _SIGNED if signed else _UNSIGNED
    return int(text) if pattern.fullmatch(text) else None
