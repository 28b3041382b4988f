"""The console log (`npaflow dev`, NPAFLOW_LOG_FORMAT=console) prints a trace plainly, never its locals."""

from __future__ import annotations

import logging

import pytest
import structlog

from worker.logging import configure_logging


@pytest.fixture(autouse=True)
def restored_logging() -> object:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.reset_defaults()


def fail_holding(secret: str) -> None:
    raise RuntimeError("boom")


def test_a_trace_in_the_console_log_shows_no_local_values(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("console")
    secret = "-".join(("hunter2", "api", "key"))  # a value, not a literal a traced line would show
    try:
        fail_holding(secret)
    except RuntimeError:
        logging.getLogger("temporalio.worker._workflow").exception("Failed handling activation")
    err = capsys.readouterr().err
    assert "RuntimeError: boom" in err and "fail_holding" in err
    assert "hunter2-api-key" not in err
