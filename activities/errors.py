"""One mapping from npaflow errors to Temporal `ApplicationError`s (STYLE rule 14).

The type names and their retry meaning live in npaflow/runtime/contract.py.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

import structlog
from pydantic import BaseModel
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from npaflow.errors import ErrorType, LaunchMovedError, NpaflowError, TransportError
from npaflow.runtime.payload_limits import past_the_ceiling

log = structlog.get_logger(__name__)

P = ParamSpec("P")
R = TypeVar("R")


def to_application_error(exc: BaseException) -> ApplicationError:
    """Convert an error into an ApplicationError whose type says what may retry it.

    An npaflow error travels as its class's `wire_type`; anything else is an
    unclassified infrastructure failure (the activity retries it). An expected
    kind (`ErrorType.is_expected`) travels as BENIGN: the SDK then logs it at
    debug level instead of as a warning with a traceback.
    """
    if isinstance(exc, LaunchMovedError):
        return ApplicationError(
            str(exc),
            exc.worker_task_queue,
            type=ErrorType.LAUNCH_MOVED.value,
            non_retryable=True,
            category=_category(ErrorType.LAUNCH_MOVED),
        )
    if isinstance(exc, NpaflowError):
        kind = ErrorType(type(exc).wire_type)
        final = isinstance(exc, TransportError) and exc.recovery_exhausted
        return ApplicationError(
            str(exc),
            type=kind.value,
            non_retryable=final or not kind.is_retryable(),
            category=_category(kind),
        )
    return ApplicationError(f"{type(exc).__name__}: {exc}", type=ErrorType.INFRA.value)


def _category(kind: ErrorType) -> ApplicationErrorCategory:
    return ApplicationErrorCategory.BENIGN if kind.is_expected() else ApplicationErrorCategory.UNSPECIFIED


def mapped_errors(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Convert npaflow errors into ApplicationErrors at the activity boundary."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return _sendable(await fn(*args, **kwargs))
        except NpaflowError as exc:
            converted = to_application_error(exc)
            if converted.category is ApplicationErrorCategory.BENIGN:
                _log_expected(converted)
            raise converted from exc

    return wrapper


def _sendable(result: R) -> R:
    """The result, once it is known to fit one payload (else the activity fails, never retried).

    Raises:
        ApplicationError: past the ceiling, naming the size and Temporal's limit.
    """
    if isinstance(result, BaseModel):
        problem = past_the_ceiling("this activity's result", len(result.model_dump_json()))
        if problem:
            raise ApplicationError(problem, type=ErrorType.CONFIGURATION.value, non_retryable=True)
    return result


def _log_expected(error: ApplicationError) -> None:
    """One line for an expected failure: the SDK logs a BENIGN one only at debug level.

    Run id, activity type and attempt are bound by worker/logging.py.
    """
    log.warning("activity.refused", error_type=error.type, error=error.message)
