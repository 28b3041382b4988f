"""JSON text assembled from pieces rendered once: what `json.dumps(indent=2, sort_keys=True)` writes.

A piece is rendered for the depth it sits at, so a document is a join of pieces;
only the pieces that changed are rendered again. tests/unit/test_ledger_document.py
pins byte-for-byte equality with a plain dump.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii
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
    """`value` as it appears at `depth` inside a document (inner lines indented to match).

    The same text as `json.dumps(value, indent=2, sort_keys=True)`, indented: given an
    indent, json falls back to its pure-Python encoder, whose generators were a tenth
    of a worker's CPU per wave in the ledger export; this is over twice as fast.
    """
    return _pretty(value, STEP * depth)


def _pretty(value: Any, indent: str) -> str:
    """`value`'s text, its inner lines indented past `indent`."""
    kind = type(value)
    if kind is str:
        return encode_basestring_ascii(value)
    if kind is dict or kind is list:
        if not value:
            return "{}" if kind is dict else "[]"
        inner = indent + STEP
        try:
            if kind is dict:
                fields = [
                    f"{encode_basestring_ascii(key)}: {_pretty(value[key], inner)}" for key in sorted(value)
                ]
                return "{\n" + inner + (",\n" + inner).join(fields) + "\n" + indent + "}"
            entries = [_pretty(entry, inner) for entry in value]
            return "[\n" + inner + (",\n" + inner).join(entries) + "\n" + indent + "]"
        except TypeError:  # a key json converts (an int), or what json refuses: json's own answer
            return _json_dumps(value, indent)
    if kind is int:
        return int.__repr__(value)
    if kind is bool or value is None:
        return "true" if value is True else "false" if value is False else "null"
    if kind is float:
        return _float_text(value)
    return _subclass_text(value, indent)


def _subclass_text(value: Any, indent: str) -> str:
    """A value of a subclass json accepts (an enum, a tuple), in json's order of checks."""
    if isinstance(value, str):
        return encode_basestring_ascii(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, list | tuple):
        return _pretty(list(value), indent)
    if isinstance(value, dict):
        return _pretty(dict(value), indent)
    return _json_dumps(value, indent)


def _json_dumps(value: Any, indent: str) -> str:
    return json.dumps(value, indent=2, sort_keys=True).replace("\n", "\n" + indent)


def _float_text(value: float) -> str:
    """A float as json writes it (NaN and the infinities included)."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


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
