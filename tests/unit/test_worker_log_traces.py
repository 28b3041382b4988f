"""A trace in the worker's log is whole, in one place, and shows no local values.

SkyPilot's `print_exception_no_traceback()` leaves `sys.tracebacklimit` at 0 after
an error passes through it; the worker's traces must not shrink to their last line.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator

import pytest
import structlog

from worker.logging import configure_logging


@pytest.fixture(autouse=True)
def restored_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    limit = getattr(sys, "tracebacklimit", None)
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.reset_defaults()
    if limit is None:
        vars(sys).pop("tracebacklimit", None)
    else:
        sys.tracebacklimit = limit


def fail_holding(secret: str) -> None:
    raise RuntimeError("boom")


def logged_failure(log: structlog.typing.FilteringBoundLogger | logging.Logger) -> None:
    secret = "-".join(("hunter2", "api", "key"))  # a value, not a literal a traced line would show
    try:
        fail_holding(secret)
    except RuntimeError:
        log.exception("report.failed")


def test_a_trace_in_the_console_log_shows_no_local_values(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("console")
    logged_failure(logging.getLogger("temporalio.worker._workflow"))
    err = capsys.readouterr().err
    assert "RuntimeError: boom" in err and "in fail_holding" in err
    assert "hunter2-api-key" not in err


def test_an_exception_logged_by_npaflow_carries_its_trace_in_the_json_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging("json")
    logged_failure(structlog.get_logger("activities.run_report"))
    line = json.loads(capsys.readouterr().err)
    assert "in fail_holding" in line["exception"] and "exc_info" not in line


@pytest.mark.parametrize("source", ["npaflow", "sdk"])
def test_a_trace_stays_whole_after_skypilot_left_the_traceback_limit_at_zero(
    capsys: pytest.CaptureFixture[str], source: str
) -> None:
    configure_logging("json")
    sys.tracebacklimit = 0
    log = structlog.get_logger("x") if source == "npaflow" else logging.getLogger("temporalio.worker")
    logged_failure(log)
    line = json.loads(capsys.readouterr().err)
    assert "in fail_holding" in line["exception"] and "hunter2-api-key" not in line["exception"]
