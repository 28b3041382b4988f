"""Crons are taken only in the field counts Temporal and the user read alike."""

from __future__ import annotations

import pytest

from npaflow.cli.cron import check_cron
from npaflow.errors import UsageError

pytestmark = pytest.mark.unit


def test_six_fields_are_refused_with_both_ways_to_say_it() -> None:
    with pytest.raises(UsageError) as refused:
        check_cron("0 0 2 * * *")
    message = str(refused.value)
    assert "Temporal reads as minute hour day month weekday YEAR" in message
    assert "'0 2 * * *'" in message and "'0 0 2 * * * *'" in message


@pytest.mark.parametrize("cron", ["0 2 * * *", "0 0 2 * * * *", "@daily", "  30 4 * * 1-5  "])
def test_five_and_seven_fields_and_macros_are_taken(cron: str) -> None:
    check_cron(cron)
