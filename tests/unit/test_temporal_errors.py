"""A Temporal server's refusal of a schedule says how to write what it refused."""

from __future__ import annotations

import pytest
from temporalio.service import RPCError, RPCStatusCode

from npaflow.temporal.errors import rpc_error_text

pytestmark = pytest.mark.unit


def refused(message: str) -> str:
    return rpc_error_text(RPCError(message, RPCStatusCode.INVALID_ARGUMENT, b""))


def test_a_refused_cron_says_how_many_fields_and_each_one_s_range() -> None:
    # The server's words for 'x y z' (a cron it cannot split into fields).
    text = refused("Invalid schedule spec: CronString does not have 5-7 fields")
    assert "five fields" in text and "minute 0-59" in text and "weekday 0-6" in text and "--every" not in text


def test_a_refused_interval_speaks_of_every_not_cron() -> None:
    text = refused("Invalid schedule spec: interval is not a valid duration: exceeds +10000 years")
    assert "--every takes a duration" in text and "--cron" not in text


def test_another_refusal_gets_no_schedule_hint() -> None:
    assert refused("WorkflowId is not set on request.") == (
        "the Temporal server refused the request: WorkflowId is not set on request."
    )


def test_an_interval_refused_outside_a_schedule_gets_no_schedule_hint() -> None:
    assert "--every" not in refused("retry policy: initial interval must be positive")
