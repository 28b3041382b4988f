"""The list a fan-out reads: what an item may be, and each member's key from its content.

Items are JSON scalars or flat objects of scalars (bounded in size, field names
a token can name). A member's key is a digest of its item's canonical JSON, so a
reordered list renames nothing, and two equal items (which would write the same
outputs) are refused rather than run twice.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence

from pydantic import JsonValue

from npaflow.errors import PayloadError

#: A scalar an item (or one of its fields) may be.
Scalar = str | int | float | bool | None
#: One item of the list: a scalar, or a flat object of scalars.
Item = Scalar | dict[str, Scalar]
#: Bytes one item may take as canonical JSON (it is rendered into commands and URIs).
MAX_ITEM_BYTES = 1024
#: Bytes the whole list may take: it is carried once through the run's history.
MAX_LIST_BYTES = 256 * 1024
#: Hex digits of a member key: 48 bits, unique among the at most 10,000 items of a group.
MEMBER_KEY_DIGITS = 12
_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ItemsError(PayloadError):
    """The list cannot be fanned out over: its problem named by item index and field, with the fix."""


def canonical(item: JsonValue) -> str:
    """The item as compact JSON with sorted keys: what its key and the ledger's copy are made of."""
    return json.dumps(item, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def member_key(item: JsonValue) -> str:
    """The member's key: a digest of the item's content (not its position)."""
    return hashlib.sha256(canonical(item).encode("utf-8")).hexdigest()[:MEMBER_KEY_DIGITS]


def list_digest(items: Sequence[JsonValue]) -> str:
    """The digest of the whole list as read (order included): recorded in the ledger."""
    return hashlib.sha256(canonical(list(items)).encode("utf-8")).hexdigest()


def parsed_items(text: str, *, uri: str, max_items: int) -> list[JsonValue]:
    """The items of a JSON list, every item checked.

    Raises:
        ItemsError: not a JSON list, past `max_items` or MAX_LIST_BYTES, or an item
            (named by index and field) is nested, too large, repeated or not data.
    """
    where = f"forEach items {uri}"
    if len(text.encode("utf-8")) > MAX_LIST_BYTES:
        raise ItemsError(
            f"{where}: the list is {len(text.encode('utf-8')):,} bytes, past the {MAX_LIST_BYTES:,}-byte "
            "bound; keep each item small (a path or an id, not the data itself)"
        )
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise ItemsError(f'{where} is not JSON ({exc}); write a JSON list such as ["a", "b"]') from None
    if not isinstance(document, list):
        raise ItemsError(f"{where} holds a JSON {type(document).__name__}, not a list; write [item, ...]")
    if len(document) > max_items:
        raise ItemsError(
            f"{where} has {len(document):,} items, past forEach.max {max_items:,}; nothing was "
            "launched (raise max, or have the stage write fewer items)"
        )
    seen: dict[str, int] = {}
    for index, item in enumerate(document):
        _check_item(item, index, where)
        key = member_key(item)
        if key in seen:
            raise ItemsError(
                f"{where}: item {index} repeats item {seen[key]} (members would write the same "
                "outputs); make each item unique"
            )
        seen[key] = index
    return document


def _check_item(item: object, index: int, where: str) -> None:
    if isinstance(item, dict):
        for field, value in item.items():
            if not _FIELD.match(field):
                raise ItemsError(
                    f"{where}: item {index} field {field!r} is not a name a token can use; "
                    "name fields with letters, digits and _ (e.g. shard_id)"
                )
            _check_scalar(value, index, where, field)
    else:
        _check_scalar(item, index, where, "")
    size = len(canonical(item).encode("utf-8"))  # type: ignore[arg-type]  # checked above
    if size > MAX_ITEM_BYTES:
        raise ItemsError(
            f"{where}: item {index} is {size:,} bytes, past {MAX_ITEM_BYTES:,}; keep items to "
            "names, paths and numbers"
        )


def _check_scalar(value: object, index: int, where: str, field: str) -> None:
    named = f"item {index}" + (f" field {field!r}" if field else "")
    if isinstance(value, dict | list):
        raise ItemsError(
            f"{where}: {named} is a nested {'object' if isinstance(value, dict) else 'list'}; items "
            'are scalars or flat objects of scalars (flatten it, e.g. {"path": ..., "rows": ...})'
        )
    if isinstance(value, str) and "{{" in value:
        raise ItemsError(f"{where}: {named} contains '{{{{'; items are data, not templates")
    if isinstance(value, float) and value != value:  # NaN is not JSON
        raise ItemsError(f"{where}: {named} is NaN")
