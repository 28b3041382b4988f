"""Pieces of ledger documents render as `json.dumps(indent=2, sort_keys=True)` would."""

from __future__ import annotations

import enum
import json
from typing import Any

import pytest

from npaflow.runtime.json_text import render

pytestmark = pytest.mark.unit


class Word(enum.StrEnum):
    A = "a"


class Number(enum.IntEnum):
    X = 3


class Mapping(dict[str, Any]):
    pass


AWKWARD: list[Any] = [
    {"b": [1, 2.5, None, True, False, 'é\n"x', {"z": {}, "a": []}], "a": {"k": (1, 2)}},
    [],
    {},
    (),
    "s",
    0,
    -0.0,
    1e300,
    10**30,
    float("nan"),
    float("inf"),
    float("-inf"),
    [[]],
    [{}],
    {"x": Word.A, "y": Number.X, "z": True},
    {Word.A: 1, "b": 2},
    {2: "a", 1: "b"},
    {True: 1},
    {None: 1},
    {1.5: 2},
    Mapping(a=1),
    [Mapping()],
    {"deep": [[[{"a": [1, {"b": None}]}]]]},
    "\u2603\U0001f600",
    [Word.A, Number.X, (1, (2,))],
]


@pytest.mark.parametrize("value", AWKWARD, ids=repr)
@pytest.mark.parametrize("depth", [0, 1, 3])
def test_render_writes_what_json_dumps_writes_indented_for_its_depth(value: Any, depth: int) -> None:
    expected = json.dumps(value, indent=2, sort_keys=True).replace("\n", "\n" + "  " * depth)
    assert render(value, depth) == expected


@pytest.mark.parametrize(
    "value",
    [{"a": object()}, {(1, 2): 1}, [{1, 2}], {"a": 1, 2: 3}],
    ids=["object", "tuple key", "set", "mixed keys"],
)
def test_render_refuses_what_json_refuses(value: Any) -> None:
    with pytest.raises(TypeError):
        json.dumps(value, indent=2, sort_keys=True)
    with pytest.raises(TypeError):
        render(value, 0)
