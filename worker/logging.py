"""structlog configuration, done once per process; Temporal context merged by a processor.

The SDK logs through the standard library; its records are rendered by the same
structlog renderer, so a JSON worker log stays one JSON object per line. A signal
whose input does not validate is dropped by the SDK (the run goes on): that is a
sender's mistake, logged as one warning naming what was wrong, not a traceback;
so is a workflow started with a type no npaflow worker registers (a typo in a raw
`temporal workflow start`), whose task the SDK fails and Temporal retries. The
console format prints any other trace plainly, without the values of locals
(a local may hold a secret).
"""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any, TextIO

import structlog
from pydantic import ValidationError
from structlog.typing import ExcInfo
from temporalio import activity
from temporalio.exceptions import ApplicationError
from temporalio.runtime import LogForwardingConfig, LoggingConfig, TelemetryFilter

from npaflow.document.problems import refusal_text

#: The SDK's message when a signal's input cannot be decoded (it drops the signal), and its logger.
_SIGNAL_DROPPED = "Failed deserializing signal input"
SDK_WORKFLOW_LOGGER = "temporalio.worker._workflow_instance"
#: Where the SDK core's own warnings (a workflow task failing, say) are logged.
CORE_LOGGER = "temporalio.core"
#: The SDK's message when a workflow task fails outside the workflow's code, and the type of an unknown one.
_ACTIVATION_FAILED = "Failed handling activation on workflow"
_UNKNOWN_TYPE = "NotFoundError"
#: Frames a logged trace keeps (see full_trace).
_TRACE_FRAMES = 1000


def merge_temporal_context(_: object, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Bind run id, activity type and attempt from the running activity, when there is one."""
    if activity.in_activity():
        info = activity.info()
        event.setdefault("run_id", info.workflow_id)
        event.setdefault("activity_type", info.activity_type)
        event.setdefault("attempt", info.attempt)
    return event


def _exception(record: logging.LogRecord) -> BaseException | None:
    """The exception a record was logged with, if any."""
    return record.exc_info[1] if record.exc_info else None


def _dropped_signal_error(record: logging.LogRecord) -> ValidationError | None:
    """The ValidationError of the SDK's record of a signal it dropped (None for any other record)."""
    error = _exception(record)
    if isinstance(error, ValidationError) and record.getMessage().startswith(_SIGNAL_DROPPED):
        return error
    return None


def _unknown_type_text(record: logging.LogRecord) -> str | None:
    """One line for the SDK's record of a workflow type this worker does not register (else None)."""
    error = _exception(record)
    if not (isinstance(error, ApplicationError) and error.type == _UNKNOWN_TYPE):
        return None
    if not record.getMessage().startswith(_ACTIVATION_FAILED):
        return None
    return (
        f"{record.getMessage()}: {error.message}; its task is retried until a worker that registers "
        "the type polls this queue (a typo? terminate it with 'temporal workflow terminate')"
    )


class SenderMistakeFilter(logging.Filter):
    """Turn the SDK's traceback for a sender's mistake into one warning.

    The mistakes: a signal whose input does not validate (dropped), and a workflow
    type no worker here registers.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep every record; rewrite those two in place."""
        if error := _dropped_signal_error(record):
            _one_warning(record, f"{record.getMessage()}: {refusal_text(error)}")
        elif text := _unknown_type_text(record):
            _one_warning(record, text)
        return True


def _one_warning(record: logging.LogRecord, text: str) -> None:
    record.msg, record.args = text, ()
    record.exc_info, record.exc_text = None, None
    record.levelno, record.levelname = logging.WARNING, logging.getLevelName(logging.WARNING)


def full_trace(exc_info: ExcInfo) -> str:
    """The whole traceback, whatever `sys.tracebacklimit` says.

    SkyPilot's `print_exception_no_traceback()` sets it to 0 and, when an error passes
    through it, never puts it back: every trace the process formats after that would
    be its last line only.
    """
    return "".join(traceback.format_exception(*exc_info, limit=_TRACE_FRAMES)).rstrip("\n")


def _console_trace(sio: TextIO, exc_info: ExcInfo) -> None:
    """The console's trace: plain, without the values of locals (a local may hold a secret)."""
    sio.write("\n" + full_trace(exc_info))


def _stdlib_handler(renderer: Any, traces: Any) -> logging.Handler:
    """A stderr handler that renders standard-library records (the SDK's) like structlog's own."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(SenderMistakeFilter())
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[
                structlog.stdlib.add_logger_name,
                structlog.processors.add_log_level,
                structlog.processors.TimeStamper(fmt="iso", utc=True),
            ],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, traces, renderer],
        )
    )
    return handler


def _keep(_: object, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    return event


def configure_logging(log_format: str = "json", level: int = logging.INFO) -> None:
    """Route structlog (and stdlib logging) to stderr as JSON lines or console text.

    In JSON a trace is the `exception` field of its line; the console prints it below.
    """
    json_lines = log_format == "json"
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if json_lines
        else structlog.dev.ConsoleRenderer(colors=False, exception_formatter=_console_trace)
    )
    traces: Any = structlog.processors.ExceptionRenderer(full_trace) if json_lines else _keep
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            merge_temporal_context,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            traces,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    root = logging.getLogger()
    root.handlers = [_stdlib_handler(renderer, traces)]
    root.setLevel(logging.WARNING)


def core_logging() -> LoggingConfig:
    """The SDK core's warnings, forwarded to the standard library and so rendered like every line.

    Left to its default, the core writes them to stderr itself, in colour: a JSON worker
    log would get lines that are not JSON.
    """
    return LoggingConfig(
        filter=TelemetryFilter(core_level="WARN", other_level="ERROR"),
        forwarding=LogForwardingConfig(logger=logging.getLogger(CORE_LOGGER)),
    )


class _ReplayedDropFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return _dropped_signal_error(record) is None


@contextmanager
def replayed_drops_silenced() -> Iterator[None]:
    """Replaying a history meets its dropped signals again: they are the past, not news."""
    logger, quiet = logging.getLogger(SDK_WORKFLOW_LOGGER), _ReplayedDropFilter()
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)
