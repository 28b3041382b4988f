"""How a fan-out member is named where people look: by its item, not its key.

A member's key (`tokenize-shard@d024adbdf637`) is a digest, stable across a
reordered list and a resume, and it is what job and task names carry; nobody
reads `shard-003` out of it. The label is the item as a person would name it:
its id-like field (`id`, `name`, ...), else its fields, else the scalar itself;
one short line. The ledger keeps the label as built (the item itself is in
`members.json`); what a terminal is shown is escaped there (npaflow/printable.py).
How a wave names its members' labels is npaflow/waves.py's (`items_text`).
"""

from __future__ import annotations

from pydantic import JsonValue

#: Fields an item is named by, in the order they are looked for.
NAME_FIELDS = ("id", "name", "key", "label", "path", "uri")
#: Characters a label keeps: enough for an id or a short path.
MAX_LABEL_CHARS = 48


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
