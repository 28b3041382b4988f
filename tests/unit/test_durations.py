"""Durations people write (`30s`, `15m`, `24h`, `7d`): positive, and within a century."""

from __future__ import annotations

from datetime import timedelta

import pytest

from npaflow.cli import run
from npaflow.cli.durations import parse_duration
from npaflow.durations import duration_seconds
from npaflow.errors import UsageError

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "seconds"), [("30s", 30), ("15m", 900), ("1.5h", 5400), ("7d", 604800), ("90", 90)]
)
def test_a_duration_reads_in_its_unit(text: str, seconds: float) -> None:
    assert duration_seconds(text) == seconds


@pytest.mark.parametrize("text", ["0s", "-5m", "5x", "1e3s", "", "36501d", "99999999d", "9" * 400 + "d"])
def test_what_is_not_a_positive_duration_within_a_century_is_refused(text: str) -> None:
    assert duration_seconds(text) is None


def test_a_century_is_the_longest_duration() -> None:
    assert parse_duration("--older-than", "36500d") == timedelta(days=36500)


def test_a_flag_past_a_century_names_the_flag_and_the_limit() -> None:
    with pytest.raises(UsageError, match=r"--since '99999999d': .*at most 36500d"):
        parse_duration("--since", "99999999d")


def test_list_since_a_time_before_the_calendar_is_a_usage_error_not_a_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run(["list", "--since", "99999999d"]) == 2
    assert "at most 36500d" in capsys.readouterr().err
