"""structlog configuration, done once per process; Temporal context merged by a processor."""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any

import structlog
from temporalio import activity


def merge_temporal_context(_: object, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Bind run id, activity type and attempt from the running activity, when there is one."""
    if activity.in_activity():
        info = activity.info()
        event.setdefault("run_id", info.workflow_id)
        event.setdefault("activity_type", info.activity_type)
        event.setdefault("attempt", info.attempt)
    return event


def configure_logging(log_format: str = "json", level: int = logging.INFO) -> None:
    """Route structlog (and stdlib logging) to stderr as JSON lines or console text."""
    renderer = (
        structlog.processors.JSONRenderer()
        if log_format == "json"
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            merge_temporal_context,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
