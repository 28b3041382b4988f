"""One mapping from npaflow errors to Temporal `ApplicationError`s (STYLE rule 14).

The type names and their retry meaning live in npaflow/runtime/contract.py.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from temporalio.exceptions import ApplicationError

from npaflow.errors import ErrorType, LaunchMovedError, NpaflowError, TransportError

P = ParamSpec("P")
R = TypeVar("R")


def to_application_error(exc: BaseException) -> ApplicationError:
    """Convert an error into an ApplicationError whose type says what may retry it.

    An npaflow error travels as its class's `wire_type`; anything else is an
    unclassified infrastructure failure (the activity retries it).
    """
    if isinstance(exc, LaunchMovedError):
        return ApplicationError(
            str(exc), exc.worker_task_queue, type=ErrorType.LAUNCH_MOVED.value, non_retryable=True
        )
    if isinstance(exc, NpaflowError):
        kind = ErrorType(type(exc).wire_type)
        final = isinstance(exc, TransportError) and exc.recovery_exhausted
        return ApplicationError(str(exc), type=kind.value, non_retryable=final or not kind.is_retryable())
    return ApplicationError(f"{type(exc).__name__}: {exc}", type=ErrorType.INFRA.value)


def mapped_errors(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Convert npaflow errors into ApplicationErrors at the activity boundary."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except NpaflowError as exc:
            raise to_application_error(exc) from exc

    return wrapper
