"""Integers from text: plain ASCII digits only, so a Unicode digit is refused, never a crash."""

from __future__ import annotations

import pytest

from npaflow.integers import plain_int

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("text", "number"), [("0", 0), ("42", 42), ("007", 7)])
def test_ascii_digits_spell_their_integer(text: str, number: int) -> None:
    assert plain_int(text) == number


@pytest.mark.parametrize("text", ["", "²", "①", "٣", "1_000", " 1", "+1", "-1", "1.0", "0x1"])
def test_anything_else_is_not_an_integer(text: str) -> None:
    assert plain_int(text) is None


def test_a_sign_is_read_only_where_it_is_allowed() -> None:
    assert plain_int("-12", signed=True) == -12
    assert plain_int("--12", signed=True) is None
