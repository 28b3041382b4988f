"""Job statuses (SkyPilot's vocabulary) and the failure classes that decide retries.

State diagrams: docs/runtime-states.md. Operator table: docs/operations.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum


class RetryBudget(StrEnum):
    """Which run option pays for another attempt after a failure."""

    RETRIES = "retries"  # payload and setup failures: `retries`
    INFRASTRUCTURE = "max_infrastructure_recoveries"  # capacity, controller, transport
    NONE = "none"  # never retried


class FailureClass(StrEnum):
    """Why a wave attempt failed; recorded as the ledger's `error_category` (DESIGN §3.6)."""

    PAYLOAD = "payload"  # the user's job failed (FAILED) or left declared outputs missing
    SETUP = "setup"  # the job's setup failed (FAILED_SETUP)
    CONFIGURATION = "configuration"  # can never succeed as configured (FAILED_PRECHECKS, bad YAML)
    CAPACITY = "capacity"  # no resources: FAILED_NO_RESOURCE or pending past the timeout
    CONTROLLER = "controller"  # the controller (or local supervisor) lost or failed the job
    TRANSPORT = "transport"  # the backend or storage could not be reached within the deadline
    CANCELLED = "cancelled"  # the job was cancelled by someone else than this run
    BUDGET = "budget"  # the run's GPU-hour budget was spent: its job was cancelled (never retried)

    def explain(self) -> str:
        """What this class means for the user, and what usually fixes it (shown where it is shown)."""
        return _EXPLAINED[self]

    def budget(self) -> RetryBudget:
        """The option that pays for another attempt after this failure."""
        if self in (FailureClass.PAYLOAD, FailureClass.SETUP):
            return RetryBudget.RETRIES
        if self in (FailureClass.CAPACITY, FailureClass.CONTROLLER, FailureClass.TRANSPORT):
            return RetryBudget.INFRASTRUCTURE
        return RetryBudget.NONE


_EXPLAINED = {
    FailureClass.PAYLOAD: "the job's own code or data failed (or left a declared output missing): "
    "read its log, fix it, resume; --retries retries it",
    FailureClass.SETUP: "the job's setup failed: read its log, fix the setup, resume",
    FailureClass.CONFIGURATION: "it can never succeed as configured (the spec, image, credentials or "
    "cloud): fix the configuration; it is not retried",
    FailureClass.CAPACITY: "no resources came within --pending-timeout-seconds: retry later or widen --infra",
    FailureClass.CONTROLLER: "the backend lost or failed the job (not your code): resume; "
    "--max-infrastructure-recoveries retries it",
    FailureClass.TRANSPORT: "the backend or storage could not be reached in time: check it, then resume",
    FailureClass.CANCELLED: "someone other than this run cancelled its job",
    FailureClass.BUDGET: "the run's GPU-hour budget is spent: resume with a higher --max-gpu-hours",
}


class JobStatus(StrEnum):
    """A managed job's (or one task's) status, in SkyPilot 0.12's `ManagedJobStatus` values."""

    PENDING = "PENDING"  # accepted, waiting for a slot or in launch backoff
    SUBMITTED = "SUBMITTED"  # launched, no status observed yet (SkyPilot's legacy value)
    STARTING = "STARTING"  # provisioning the task's cluster
    RUNNING = "RUNNING"  # setup or run is executing
    WINDING_DOWN = "WINDING_DOWN"  # a batch coordinator merging outputs before it ends
    RECOVERING = "RECOVERING"  # preempted, relaunching
    CANCELLING = "CANCELLING"  # cancel in progress
    SUCCEEDED = "SUCCEEDED"  # run exited 0 on every node
    CANCELLED = "CANCELLED"  # cancelled by a user or by SkyPilot
    FAILED = "FAILED"  # run exited non-zero
    FAILED_SETUP = "FAILED_SETUP"  # setup exited non-zero
    FAILED_PRECHECKS = "FAILED_PRECHECKS"  # launch refused before provisioning
    FAILED_NO_RESOURCE = "FAILED_NO_RESOURCE"  # capacity never became available
    FAILED_CONTROLLER = "FAILED_CONTROLLER"  # the controller (or our supervisor) died
    UNKNOWN = "UNKNOWN"  # the status could not be read this time
    ABSENT = "ABSENT"  # a verified queue does not contain the job

    @classmethod
    def parse(cls, raw: str | None) -> JobStatus:
        """Map a status string read at an edge (a queue row, a stored file) to a member.

        SkyPilot's `DEPRECATED_SUBMITTED` reads as SUBMITTED and `FAILED_DRIVER` as a
        controller failure; an unrecognised `FAILED_*` stays a failure, never a success.
        """
        text = (raw or "").strip().upper()
        aliases = {
            "SUCCESS": "SUCCEEDED",
            "COMPLETED": "SUCCEEDED",
            "DONE": "SUCCEEDED",
            "CANCELED": "CANCELLED",
            "STOPPED": "CANCELLED",
            "FAIL": "FAILED",
            "FAILED_RUNTIME": "FAILED",
            "FAILED_DRIVER": "FAILED_CONTROLLER",
            "DEPRECATED_SUBMITTED": "SUBMITTED",
            "": "UNKNOWN",
        }
        text = aliases.get(text, text)
        if text in cls.__members__:
            return cls(text)
        return cls.FAILED if text.startswith("FAILED") else cls.UNKNOWN

    def is_terminal(self) -> bool:
        """True once the job can no longer change."""
        return self in _TERMINAL

    def is_success(self) -> bool:
        """True for the one good terminal status."""
        return self is JobStatus.SUCCEEDED

    def is_failure(self) -> bool:
        """True for terminal statuses other than success."""
        return self.is_terminal() and not self.is_success()

    def is_active(self) -> bool:
        """True while the task is executing (what `max_concurrent_observed` counts)."""
        return self in (JobStatus.RUNNING, JobStatus.RECOVERING, JobStatus.WINDING_DOWN)

    def is_waiting_for_resources(self) -> bool:
        """True before the task first runs: where a capacity shortage shows (skypilot ref §9)."""
        return self in (JobStatus.PENDING, JobStatus.STARTING, JobStatus.SUBMITTED)

    def failure_class(self) -> FailureClass:
        """Why a job that ended with this terminal status failed."""
        return _FAILURE_CLASSES.get(self, FailureClass.PAYLOAD)


_TERMINAL = frozenset(
    {
        JobStatus.SUCCEEDED,
        JobStatus.CANCELLED,
        JobStatus.FAILED,
        JobStatus.FAILED_SETUP,
        JobStatus.FAILED_PRECHECKS,
        JobStatus.FAILED_NO_RESOURCE,
        JobStatus.FAILED_CONTROLLER,
    }
)
_FAILURE_CLASSES = {
    JobStatus.FAILED: FailureClass.PAYLOAD,
    JobStatus.FAILED_SETUP: FailureClass.SETUP,
    JobStatus.FAILED_PRECHECKS: FailureClass.CONFIGURATION,
    JobStatus.FAILED_NO_RESOURCE: FailureClass.CAPACITY,
    JobStatus.FAILED_CONTROLLER: FailureClass.CONTROLLER,
    JobStatus.CANCELLED: FailureClass.CANCELLED,
}
_ACTIVE_PRIORITY = (
    JobStatus.RUNNING,
    JobStatus.RECOVERING,
    JobStatus.WINDING_DOWN,
    JobStatus.STARTING,
    JobStatus.PENDING,
    JobStatus.CANCELLING,
)


def aggregate_job_status(task_statuses: Sequence[JobStatus]) -> JobStatus:
    """Compute a whole job's status from its task rows (reference §6.4.5)."""
    if not task_statuses:
        return JobStatus.ABSENT
    for status in task_statuses:
        if status.is_failure():
            return status
    if all(status.is_success() for status in task_statuses):
        return JobStatus.SUCCEEDED
    for candidate in _ACTIVE_PRIORITY:
        if candidate in task_statuses:
            return candidate
    return task_statuses[0]
