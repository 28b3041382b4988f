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


@pytest.mark.parametrize(
    ("cron", "said"),
    [
        ("61 * * * *", "minute 61 is outside 0-59"),
        ("0 24 * * *", "hour 24 is outside 0-23"),
        ("0 2 0 * *", "day-of-month 0 is outside 1-31"),
        ("0 2 1-32 * *", "day-of-month 32 is outside 1-31"),
        ("0 2 * 13 *", "month 13 is outside 1-12"),
        ("0 2 * * 1,8", "weekday 8 is outside 0-7"),
        ("0 61 2 * * * *", "minute 61 is outside 0-59"),
    ],
)
def test_a_number_outside_its_field_is_refused_naming_the_field(cron: str, said: str) -> None:
    with pytest.raises(UsageError, match=said):
        check_cron(cron)


@pytest.mark.parametrize(
    "cron", ["*/90 * * * *", "0 9-17/2 * * MON-FRI", "0 0 L * *", "0 0 * * 5#3", "0 2 * * 7"]
)
def test_steps_names_and_temporals_own_words_are_left_to_the_server(cron: str) -> None:
    check_cron(cron)


@pytest.mark.parametrize(
    "cron", ["CRON_TZ=Europe/Paris 0 2 * * *", "TZ=America/New_York 30 4 * * 1-5", "CRON_TZ=UTC @daily"]
)
def test_a_time_zone_prefix_as_temporal_takes_it_is_taken(cron: str) -> None:
    check_cron(cron)


def test_a_time_zone_prefix_does_not_count_as_a_field() -> None:
    with pytest.raises(UsageError) as refused:
        check_cron("CRON_TZ=Europe/Paris 0 0 2 * * *")
    message = str(refused.value)
    assert "has 6 fields" in message
    assert "'CRON_TZ=Europe/Paris 0 2 * * *'" in message and "'CRON_TZ=Europe/Paris 0 0 2 * * * *'" in message


def test_an_unknown_time_zone_is_refused_naming_it() -> None:
    with pytest.raises(UsageError, match=r"unknown time zone 'Mars/Olympus'.*Europe/Paris"):
        check_cron("CRON_TZ=Mars/Olympus 0 2 * * *")


def test_a_field_out_of_range_after_a_time_zone_is_named() -> None:
    with pytest.raises(UsageError, match="hour 25 is outside 0-23"):
        check_cron("TZ=Europe/Paris 0 25 * * *")
