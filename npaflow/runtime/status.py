"""Job status vocabulary (SkyPilot's) and how a run reacts to each status.

State diagram: docs/runtime-states.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum


class FailureClass(StrEnum):
    """Which retry budget a failure spends (DESIGN §3.6)."""

    PAYLOAD = "payload"  # the user's job failed: retried under `retries`
    INFRA = "infra"  # capacity/controller/transport: retried under max_infrastructure_recoveries
    CONFIGURATION = "configuration"  # can never succeed as configured: never retried
    CANCELLED = "cancelled"  # someone cancelled the job: never retried


class JobStatus(StrEnum):
    """A managed job's (or one task's) status, in SkyPilot 0.12's vocabulary."""

    PENDING = "PENDING"  # accepted, waiting for a slot or in launch backoff
    SUBMITTED = "SUBMITTED"  # legacy/unknown-yet: launched, no status observed
    STARTING = "STARTING"  # provisioning the task's cluster
    RUNNING = "RUNNING"  # setup or run is executing
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
        """Map a raw status string to a member; unrecognized FAILED_* stays a failure."""
        text = (raw or "").strip().upper()
        aliases = {"SUCCESS": "SUCCEEDED", "COMPLETED": "SUCCEEDED", "DONE": "SUCCEEDED",
                   "CANCELED": "CANCELLED", "STOPPED": "CANCELLED", "FAIL": "FAILED",
                   "FAILED_RUNTIME": "FAILED", "FAILED_DRIVER": "FAILED_CONTROLLER", "": "UNKNOWN"}
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
        return self in (JobStatus.RUNNING, JobStatus.RECOVERING)

    def failure_class(self) -> FailureClass:
        """Which retry budget a terminal failure with this status spends."""
        return _FAILURE_CLASSES.get(self, FailureClass.PAYLOAD)


_TERMINAL = frozenset({JobStatus.SUCCEEDED, JobStatus.CANCELLED, JobStatus.FAILED,
                       JobStatus.FAILED_SETUP, JobStatus.FAILED_PRECHECKS,
                       JobStatus.FAILED_NO_RESOURCE, JobStatus.FAILED_CONTROLLER})
_FAILURE_CLASSES = {
    JobStatus.FAILED_NO_RESOURCE: FailureClass.INFRA,
    JobStatus.FAILED_CONTROLLER: FailureClass.INFRA,
    JobStatus.FAILED_PRECHECKS: FailureClass.CONFIGURATION,
    JobStatus.CANCELLED: FailureClass.CANCELLED,
}
_ACTIVE_PRIORITY = (JobStatus.RUNNING, JobStatus.RECOVERING, JobStatus.STARTING, JobStatus.PENDING,
                    JobStatus.CANCELLING)


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
