"""What a move of a wave attempt may set: the record's fields, named, so a misspelt one is a type error."""

from __future__ import annotations

from typing import TypedDict

from npaflow.runtime.ledger import CachedStep, Cancellation, CarriedMember, Credentials, Observation, TaskRow
from npaflow.runtime.status import FailureClass, JobStatus
from npaflow.runtime.vocabulary import RecoveryDecision


class AttemptChanges(TypedDict, total=False):
    """The fields of a `WaveAttemptRecord` a transition may set (its status follows the stage)."""

    job_id: str
    job_name: str
    sky_status: JobStatus
    logical_launch_id: str
    launch_sequence: int
    adopted: bool
    replayed: bool
    reconciliation: list[str]
    recovery_decision: RecoveryDecision
    credentials: Credentials
    request_id: str
    worker_id: str
    worker_task_queue: str
    tasks: list[TaskRow]
    observations: list[Observation]
    max_concurrent_observed: int
    status_errors: list[str]
    ended_at: str
    error: str
    primary_error: str
    error_category: FailureClass
    cancellation: Cancellation
    cache: list[CachedStep]
    unconfirmed_outputs: list[str]
    carried: list[CarriedMember]
