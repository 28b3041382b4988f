"""One mapping from npaflow errors to Temporal `ApplicationError`s (STYLE rule 14)."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from temporalio.exceptions import ApplicationError

from activities.backends.base import BackendUnavailableError, LaunchRejectedError
from npaflow.errors import (
    ConfigurationError,
    InfraError,
    LaunchUnidentifiedError,
    NpaflowError,
    PayloadError,
    SpecError,
)

P = ParamSpec("P")
R = TypeVar("R")

#: Error types an activity retry can never fix; the workflow decides what happens next.
NON_RETRYABLE_ERROR_TYPES = [
    "SpecError",  # the spec or its overrides are invalid: fix the spec
    "ConfigurationError",  # the launch can never succeed as configured
    "PayloadError",  # the user's job or artifact is wrong; retried (if at all) as a new attempt
    "LaunchUnidentified",  # a launch may have happened: retrying could launch a second copy
]


def to_application_error(exc: BaseException) -> ApplicationError:
    """Convert an npaflow error into an ApplicationError whose type names its retry budget."""
    if isinstance(exc, LaunchUnidentifiedError):
        return ApplicationError(str(exc), type="LaunchUnidentified", non_retryable=True)
    if isinstance(exc, SpecError):
        return ApplicationError(str(exc), type="SpecError", non_retryable=True)
    for kind in (ConfigurationError, PayloadError, InfraError):
        if isinstance(exc, kind):
            return ApplicationError(str(exc), type=kind.__name__,
                                    non_retryable=kind.__name__ in NON_RETRYABLE_ERROR_TYPES)
    if isinstance(exc, NpaflowError):
        return ApplicationError(str(exc), type="ConfigurationError", non_retryable=True)
    return ApplicationError(f"{type(exc).__name__}: {exc}", type="InfraError")


def mapped_errors(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Convert npaflow and backend errors into ApplicationErrors at the activity boundary."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except NpaflowError as exc:
            raise to_application_error(exc) from exc
        except LaunchRejectedError as exc:
            error = InfraError(str(exc)) if exc.retryable else ConfigurationError(str(exc))
            raise to_application_error(error) from exc
        except BackendUnavailableError as exc:
            raise to_application_error(InfraError(str(exc))) from exc

    return wrapper
