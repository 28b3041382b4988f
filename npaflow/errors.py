"""The npaflow error hierarchy: one class per way a failure is handled.

`SpecError` is a user error (exit 2, never retried); `PayloadError` is retried
under `retries`; `InfraError` and its kinds (capacity, controller, transport)
under `max_infrastructure_recoveries`; `ConfigurationError` (and
`AccessDeniedError`) is never retried. Activities turn these into Temporal
`ApplicationError`s whose type is the class's `wire_type` (`ErrorType`).
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from pydantic import BaseModel

from npaflow.presets import FROZEN


class SpecIssue(BaseModel):
    """One problem found in a spec, located as precisely as the YAML allows."""

    model_config = FROZEN

    file: str = ""
    line: int = 0
    column: int = 0
    state: str = ""
    field: str = ""
    message: str
    hint: str = ""

    def render(self) -> str:
        """Format as `path:line:col: state X: field: message (hint: ...)`."""
        where = self.file or "<spec>"
        if self.line:
            where += f":{self.line}:{self.column}"
        parts = [where]
        if self.state:
            parts.append(f"state {self.state}")
        if self.field and not self.message.startswith(self.field):
            parts.append(self.field)
        text = ": ".join(parts) + ": " + self.message
        if self.hint:
            text += f" (hint: {self.hint})"
        return text


class ErrorType(StrEnum):
    """`ApplicationError.type` values activities raise, named after npaflow's error classes."""

    SPEC = "SpecError"  # the spec or its overrides are invalid: fix the spec
    CONFIGURATION = "ConfigurationError"  # the launch can never succeed as configured
    ACCESS_DENIED = "AccessDeniedError"  # credentials missing, invalid or not allowed
    PAYLOAD = "PayloadError"  # the user's job or artifact is wrong (a new attempt may help)
    LAUNCH_UNIDENTIFIED = "LaunchUnidentifiedError"  # a launch may exist: never relaunch blindly
    LAUNCH_MOVED = "LaunchMoved"  # began on another worker: retried on that worker's queue
    CAPACITY = "CapacityError"  # no resources; the workflow's infra budget decides
    CONTROLLER = "ControllerError"  # the controller lost the job; the infra budget decides
    TRANSPORT = "TransportError"  # unreachable: retried until the recovery deadline, then final
    INFRA = "InfraError"  # anything else outside the job: the activity retries, then infra budget

    def is_retryable(self) -> bool:
        """True when a Temporal retry of the same activity can help (the rest is the workflow's)."""
        return self in (ErrorType.TRANSPORT, ErrorType.INFRA)

    def is_expected(self) -> bool:
        """True for what the spec, its settings or the job caused, or routing: not a worker fault.

        Such a failure is an answer the run handles, so the worker logs it as one line
        (no traceback) and keeps it out of Temporal's activity-failure metrics.
        """
        return self in _EXPECTED


_EXPECTED = frozenset(
    {
        ErrorType.SPEC,
        ErrorType.CONFIGURATION,
        ErrorType.ACCESS_DENIED,
        ErrorType.PAYLOAD,
        ErrorType.LAUNCH_MOVED,
    }
)


class NpaflowError(Exception):
    """Base of every error npaflow raises on purpose.

    `wire_type` is the `ApplicationError.type` the class travels as between
    activities and workflows; `ErrorType` says what may retry it. A class and
    its wire type agree on retries (tests/unit/test_errors.py): an `InfraError`
    is spent from the infrastructure budget, and nothing else is.
    """

    wire_type: ClassVar[ErrorType] = ErrorType.CONFIGURATION  # unclassified: never retried (fail closed)


class SpecError(NpaflowError):
    """A spec (or its overrides) is invalid; carries every issue found."""

    wire_type = ErrorType.SPEC

    def __init__(self, issues: list[SpecIssue]) -> None:
        self.issues = list(issues)
        super().__init__("\n".join(issue.render() for issue in self.issues))


class UsageError(NpaflowError):
    """The command line itself is wrong (missing file, bad flag value)."""


class PayloadError(NpaflowError):
    """The user's job failed (FAILED, FAILED_SETUP, missing outputs)."""

    wire_type = ErrorType.PAYLOAD


class InfraError(NpaflowError):
    """A failure outside the user's job that no finer class describes (controller budget)."""

    wire_type = ErrorType.INFRA


class CapacityError(InfraError):
    """No resources: the backend could not place the job (capacity budget, exit 75)."""

    wire_type = ErrorType.CAPACITY


class ControllerError(InfraError):
    """The backend's controller (or the local supervisor) lost or failed the job."""

    wire_type = ErrorType.CONTROLLER


class TransportError(InfraError):
    """The backend or storage could not be reached; retried within the recovery deadline.

    `recovery_exhausted` marks the error raised once that deadline has passed:
    it is final for the activity, and the workflow's infrastructure budget decides.
    """

    wire_type = ErrorType.TRANSPORT

    def __init__(self, message: str, *, recovery_exhausted: bool = False) -> None:
        super().__init__(message)
        self.recovery_exhausted = recovery_exhausted


class LaunchMovedError(ControllerError):
    """A launch began on another worker, whose host holds any job it made: reconcile it there."""

    wire_type = ErrorType.LAUNCH_MOVED

    def __init__(self, message: str, worker_task_queue: str) -> None:
        super().__init__(message)
        self.worker_task_queue = worker_task_queue


class LaunchUnidentifiedError(NpaflowError):
    """A launch returned no usable job id and no job carries its name: never relaunch blindly.

    Not an `InfraError`: the infrastructure budget would launch again beside a job
    that may exist, so the wave fails closed instead.
    """

    wire_type = ErrorType.LAUNCH_UNIDENTIFIED


class BudgetSpentError(NpaflowError):
    """The run's GPU-hour budget is spent: nothing more launches (`resume --max-gpu-hours` raises it)."""


class ConfigurationError(NpaflowError):
    """A launch can never succeed as configured (prechecks, invalid YAML)."""

    wire_type = ErrorType.CONFIGURATION


class AccessDeniedError(ConfigurationError):
    """Credentials are missing, invalid or not allowed to do this: no retry can fix it."""

    wire_type = ErrorType.ACCESS_DENIED


class RenderError(ConfigurationError):
    """A wave cannot be rendered to SkyPilot YAML."""


class TokenError(NpaflowError):
    """A `{{scope.key}}` token cannot be resolved."""
