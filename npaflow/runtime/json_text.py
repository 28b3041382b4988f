"""JSON text assembled from pieces rendered once: what `json.dumps(indent=2, sort_keys=True)` writes.

A piece is rendered for the depth it sits at, so a document is a join of pieces;
only the pieces that changed are rendered again. tests/unit/test_ledger_document.py
pins byte-for-byte equality with a plain dump.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: One level of indentation.
STEP = "  "


@dataclass(frozen=True)
class Raw:
    """A value already rendered for its position (its inner lines indented for its depth).

    Held as pieces to be joined: a large value (a long run's waves) is copied once,
    into the document, not again at every level it is nested in.
    """

    pieces: tuple[str, ...]

    @classmethod
    def of(cls, text: str) -> Raw:
        """One rendered string."""
        return cls((text,))


def render(value: Any, depth: int) -> str:
    """`value` as it appears at `depth` inside a document (inner lines indented to match)."""
    return json.dumps(value, indent=2, sort_keys=True).replace("\n", "\n" + STEP * depth)


def item(value: Any, depth: int) -> str:
    """A list item or object field value at `depth`, with its own leading indentation."""
    return STEP * depth + render(value, depth)


def list_raw(items: Sequence[str], depth: int, *, opening: str = "[", closing: str = "]") -> Raw:
    """A list whose items were rendered with `item(value, depth + 1)`, sitting at `depth`.

    With `{` and `}` the items are an object's `"key": value` lines instead.
    """
    if not items:
        return Raw.of(opening + closing)
    pieces = [opening + "\n"] * (2 * len(items))
    pieces[1::2] = items
    pieces[2::2] = [",\n"] * (len(items) - 1)
    return Raw((*pieces, "\n" + STEP * depth + closing))


def object_raw(fields: Mapping[str, Any], depth: int) -> Raw:
    """An object sitting at `depth`; `Raw` values are inserted as they are, others rendered."""
    if not fields:
        return Raw.of("{}")
    inner = STEP * (depth + 1)
    pieces = ["{\n"]
    for index, key in enumerate(sorted(fields)):
        value = fields[key]
        separator = ",\n" if index else ""
        pieces.append(f"{separator}{inner}{json.dumps(key)}: ")
        if isinstance(value, Raw):
            pieces.extend(value.pieces)
        else:
            pieces.append(render(value, depth + 1))
    pieces.append("\n" + STEP * depth + "}")
    return Raw(tuple(pieces))


def object_text(fields: Mapping[str, Any], depth: int) -> str:
    """`object_raw` joined: the object's text."""
    return "".join(object_raw(fields, depth).pieces)


def document_text(fields: Mapping[str, Any]) -> str:
    """A whole file: the top-level object and a final newline, joined once."""
    return "".join((*object_raw(fields, 0).pieces, "\n"))
