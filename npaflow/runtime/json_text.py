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

_STEP = "  "


@dataclass(frozen=True)
class Raw:
    """A value already rendered for its position (its inner lines indented for its depth)."""

    text: str


def render(value: Any, depth: int) -> str:
    """`value` as it appears at `depth` inside a document (inner lines indented to match)."""
    return json.dumps(value, indent=2, sort_keys=True).replace("\n", "\n" + _STEP * depth)


def item(value: Any, depth: int) -> str:
    """A list item or object field value at `depth`, with its own leading indentation."""
    return _STEP * depth + render(value, depth)


def list_text(items: Sequence[str], depth: int) -> str:
    """A list whose items were rendered with `item(value, depth + 1)`, sitting at `depth`."""
    if not items:
        return "[]"
    return "[\n" + ",\n".join(items) + "\n" + _STEP * depth + "]"


def object_text(fields: Mapping[str, Any], depth: int) -> str:
    """An object sitting at `depth`; `Raw` values are inserted as they are, others rendered."""
    if not fields:
        return "{}"
    inner = _STEP * (depth + 1)
    lines = []
    for key in sorted(fields):
        value = fields[key]
        text = value.text if isinstance(value, Raw) else render(value, depth + 1)
        lines.append(f"{inner}{json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(lines) + "\n" + _STEP * depth + "}"
