"""One mapping from npaflow errors to Temporal `ApplicationError`s (STYLE rule 14)."""

from __future__ import annotations

from temporalio.exceptions import ApplicationError

from npaflow.errors import (
    ConfigurationError,
    InfraError,
    LaunchUnidentifiedError,
    NpaflowError,
    PayloadError,
    SpecError,
)

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
