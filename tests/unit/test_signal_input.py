"""A hand-typed cancel signal cancels whatever JSON its input is: it is never dropped over its shape."""

from __future__ import annotations

import pytest

from npaflow.runtime.signal_input import cancel_reason

pytestmark = pytest.mark.unit


def test_a_cancel_signals_reason_is_its_string_or_its_reason_field() -> None:
    assert cancel_reason("budget spent") == "budget spent"
    assert cancel_reason({"reason": "budget spent", "by": "ops"}) == "budget spent"


def test_a_cancel_signal_of_any_other_json_keeps_it_as_its_reason() -> None:
    assert cancel_reason({"x": 1}) == '{"x": 1}'
    assert cancel_reason([1, 2]) == "[1, 2]"
    assert cancel_reason(42) == "42"
    assert cancel_reason(None) == cancel_reason({}) == ""
