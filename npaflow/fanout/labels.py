"""How a fan-out member is named where people look: by its item, not its key.

A member's key (`tokenize-shard@d024adbdf637`) is a digest, stable across a
reordered list and a resume, and it is what job and task names carry; nobody
reads `shard-003` out of it. The label is the item as a person would name it:
its id-like field (`id`, `name`, ...), else its fields, else the scalar itself;
one short line. The ledger keeps the label as built (the item itself is in
`members.json`); what a terminal is shown is escaped there (npaflow/printable.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import JsonValue

from npaflow.waves import counted_states

#: Fields an item is named by, in the order they are looked for.
NAME_FIELDS = ("id", "name", "key", "label", "path", "uri")
#: Characters a label keeps: enough for an id or a short path.
MAX_LABEL_CHARS = 48
#: Labels a line names before it counts the rest (`+12 more`).
LABELS_SHOWN = 4


def item_label(item: JsonValue) -> str:
    """`shard-003` for `{"id": "shard-003", "rows": 4000}`; `rows=4000, lr=0.1` without a name field."""
    if isinstance(item, dict):
        named = next((item[f] for f in NAME_FIELDS if _names(item.get(f))), None)
        if named is not None:
            text = _text(named)
        else:
            text = ", ".join(f"{field}={_text(value)}" for field, value in item.items())
    else:
        text = _text(item)
    text = " ".join(text.split())  # one line: an item's newline would split a display's line
    return text if len(text) <= MAX_LABEL_CHARS else text[: MAX_LABEL_CHARS - 1] + "…"


def items_text(labels: Sequence[str], shown: int = LABELS_SHOWN) -> str:
    """` [shard-000, shard-001, +2 more]`: which items a wave ran ("" for a wave of no fan-out member)."""
    named = [label for label in labels if label]
    if not named:
        return ""
    rest = len(named) - shown if len(named) > shown + 1 else 0
    listed = named[: len(named) - rest]
    return " [" + ", ".join(listed) + (f", +{rest} more" if rest else "") + "]"


def wave_text(states: Sequence[str], items: Sequence[str]) -> str:
    """`a,b` for a wave's states; a fan-out batch by its items: `shard ×4 [s-0, s-1, s-2, s-3]`."""
    if any(items):
        return ", ".join(counted_states(states)) + items_text(items)
    return ",".join(states)


def _names(value: object) -> bool:
    """A value that can name an item: a non-blank string or a number."""
    if isinstance(value, str):
        return bool(value.strip())
    return isinstance(value, int | float) and not isinstance(value, bool)


def _text(value: JsonValue) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    return str(value)
