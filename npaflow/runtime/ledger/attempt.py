"""One wave attempt as the ledger records it: its tasks, observations, cancellation and spend.

Split from models.py (the documents that hold these records); import both from
the front door, `npaflow.runtime.ledger`.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, Field, PlainSerializer

from npaflow.document.models import Artifact
from npaflow.presets import STRICT
from npaflow.runtime.ledger.records import CachedStep, CarriedMember, PlannedStep
from npaflow.runtime.status import FailureClass, JobStatus
from npaflow.runtime.usage import TaskShape, attempt_hours
from npaflow.runtime.vocabulary import (
    CancellationState,
    RecoveryDecision,
    WaveStatus,
)
from npaflow.traversal.models import WaveKind
from npaflow.waves import WaveKey, sanitize_task_name


def _blank_is_none(value: Any) -> Any:
    return None if value == "" else value


def _enum_or_blank(value: StrEnum | None) -> str:
    return value.value if value is not None else ""


#: A job status that the ledger writes as "" while none is known (reference field format).
MaybeJobStatus = Annotated[
    JobStatus | None, BeforeValidator(_blank_is_none), PlainSerializer(_enum_or_blank, return_type=str)
]


def _uri_is_artifact(items: Any) -> Any:
    """Older ledgers (the reference's too) may hold outputs as plain URI strings."""
    if isinstance(items, list):
        return [{"uri": item} if isinstance(item, str) else item for item in items]
    return items


#: Declared outputs as the reference writes them: `{uri, schema}` records (dumped by alias).
ArtifactList = Annotated[list[Artifact], BeforeValidator(_uri_is_artifact)]
#: A failure class that the ledger writes as "" for attempts that did not fail.
MaybeFailureClass = Annotated[
    FailureClass | None, BeforeValidator(_blank_is_none), PlainSerializer(_enum_or_blank, return_type=str)
]


class Cancellation(BaseModel):
    """The outcome of cancelling one wave attempt's job."""

    model_config = STRICT

    state: CancellationState = CancellationState.NOT_APPLICABLE
    error: str = ""

    def unverified(self, job_id: str) -> str:
        """What a cancelled attempt's error adds when its job was not seen to end ("" when it was)."""
        if not job_id or not self.state.unverified():
            return ""
        how = "was requested" if self.state is CancellationState.REQUESTED else f"failed ({self.error})"
        return f"the cancel of job {job_id} {how}, not verified: {_until_swept(1)}"


#: Jobs a run's error names when their cancels were not verified (the ledger's attempts name all).
NAMED_UNVERIFIED = 10


def unverified_cancels(job_ids: Sequence[str]) -> str:
    """What a run's error adds when it ended with cancels not seen to end their jobs ("" for none)."""
    if not job_ids:
        return ""
    named = ", ".join(job_ids[:NAMED_UNVERIFIED]) + (
        f" and {len(job_ids) - NAMED_UNVERIFIED} more" if len(job_ids) > NAMED_UNVERIFIED else ""
    )
    jobs = f"job {named}" if len(job_ids) == 1 else f"jobs {named}"
    return (
        f"the cancel of {jobs} was not verified: {_until_swept(len(job_ids))} "
        "(`npaflow status` shows when it has)"
    )


def _until_swept(jobs: int) -> str:
    they, them = ("it", "it") if jobs == 1 else ("they", "them")
    return f"{they} may still run until the workers' orphan sweep cancels {them} by id"


class Credentials(BaseModel):
    """Secret names a launch passed; values are never persisted."""

    model_config = STRICT

    names: list[str] = Field(default_factory=list)
    fingerprint: str = ""
    source: str = ""
    values_persisted: bool = False


class TaskRow(BaseModel):
    """One task of a job's timeline."""

    model_config = STRICT

    job_id: str = ""
    task_id: int = 0
    task_name: str = ""
    status: JobStatus = JobStatus.UNKNOWN
    submitted_at: str = ""
    start_at: str = ""
    end_at: str = ""
    is_job_group: bool = False
    execution: str = ""
    cluster_name: str = ""
    retry_count: int = 0
    last_progress_at: str = ""
    last_updated_at: str = ""
    failure_reason: str = ""
    recovery_reason: str = ""  # ours: why SkyPilot recovers it, while RECOVERING (0.14+ servers)


class Observation(BaseModel):
    """One poll's view of which tasks were running."""

    model_config = STRICT

    observed_at: str
    scheduler_state: JobStatus
    running: list[str] = Field(default_factory=list)
    running_count: int = 0
    statuses: dict[str, JobStatus] = Field(default_factory=dict)
    recovering: dict[str, str] = Field(default_factory=dict)  # ours: task -> why SkyPilot recovers it


class WaveAttemptRecord(BaseModel):
    """One attempt of one wave; upserted by (key, attempt)."""

    model_config = STRICT

    key: WaveKey
    replayed: bool = False
    adopted: bool = False
    states: list[str] = Field(default_factory=list)
    items: list[str] = Field(default_factory=list)  # ours: a fan-out batch's members by item, as `states`
    kind: WaveKind = WaveKind.SERIAL
    group: str = ""
    attempt: int = 1
    job_id: str = ""
    job_name: str = ""
    status: WaveStatus = WaveStatus.PENDING
    sky_status: MaybeJobStatus = None
    started_at: str = ""
    ended_at: str = ""
    tasks: list[TaskRow] = Field(default_factory=list)
    outputs: ArtifactList = Field(default_factory=list)
    error: str = ""
    max_concurrent_observed: int = 0
    observations: list[Observation] = Field(default_factory=list)
    status_errors: list[str] = Field(default_factory=list)
    logical_launch_id: str = ""
    scheduler_fence_sequence: int = 0
    launch_sequence: int = 0
    error_category: MaybeFailureClass = None
    readiness: list[str] = Field(default_factory=list)
    reconciliation: list[str] = Field(default_factory=list)
    recovery_decision: RecoveryDecision = RecoveryDecision.NONE
    operator_remedy: str = ""
    primary_error: str = ""
    reconciliation_error: str = ""
    cancellation: Cancellation = Field(default_factory=Cancellation)
    credentials: Credentials = Field(default_factory=Credentials)
    request_id: str = ""  # ours: the backend's launch request, resolved to job_id
    worker_id: str = ""  # ours: the worker that holds a local-backend job
    worker_task_queue: str = ""  # ours: where that job's await/cancel/logs activities run
    task_shapes: list[TaskShape] = Field(default_factory=list)  # ours: nodes and GPUs per task
    planned: list[PlannedStep] = Field(default_factory=list)  # ours: each member as planned
    gpu_hours: float = 0.0  # ours: accelerator-hours of this attempt (so far, while running)
    node_hours: float = 0.0  # ours: node-hours of this attempt (CPU-only tasks too)
    cache: list[CachedStep] = Field(default_factory=list)  # ours: the stage cache's keys, hits, misses
    unconfirmed_outputs: list[str] = Field(default_factory=list)  # ours: declared, not found after the job
    carried: list[CarriedMember] = Field(default_factory=list)  # ours: members an earlier attempt ran

    def clocked_tasks(self) -> list[TaskRow]:
        """The rows this attempt's hours are clocked from (DESIGN 28: one clock for spend).

        The job's own task rows, each from its start (a row with no start never ran). An
        attempt whose job left no rows (cancelled or terminated before its await ended,
        or still running) counts from its launch: a job that ran is never counted as
        zero. An attempt that never got a job has no clock.
        """
        if self.tasks or not self.job_id or not self.started_at:
            return list(self.tasks)
        return [
            TaskRow(job_id=self.job_id, task_id=index, task_name=shape.task_name, start_at=self.started_at)
            for index, shape in enumerate(self.task_shapes)
        ]

    def with_hours(self, now: str = "") -> WaveAttemptRecord:
        """This record with gpu_hours/node_hours recomputed from its clocked task rows.

        A task still running counts up to `now`, else the newest observation (or the end of
        the attempt). A record with nothing to clock (a summary of an earlier execution's
        attempt, an attempt that never got a job) keeps its hours.
        """
        rows = self.clocked_tasks()
        if not rows:
            return self
        until = self.ended_at or now or (self.observations[-1].observed_at if self.observations else "")
        hours = attempt_hours(rows, self.task_shapes, until).values()
        gpu = round(sum(h[0] for h in hours), 6)
        node = round(sum(h[1] for h in hours), 6)
        if (gpu, node) == (self.gpu_hours, self.node_hours):
            return self
        return self.model_copy(update={"gpu_hours": gpu, "node_hours": node})

    def cancel_unverified(self) -> bool:
        """Cancelled without its job seen to end: the job (and its clock) may run on."""
        return self.status is WaveStatus.CANCELLED and self.cancellation.state.unverified()

    def succeeded(self) -> bool:
        """True for an attempt that succeeded (its hours are not spent on a failure)."""
        return self.status is WaveStatus.SUCCEEDED

    def members_done(self, *, outputs: bool = True) -> set[str]:
        """Item keys of the fan-out members this attempt ran to success, the cache served, or it carried."""
        served = {step.item for step in self.cache if step.hit}
        return served | {member.item for member in self.carried} | self.members_ran(outputs=outputs)

    def members_ran(self, *, outputs: bool = True) -> set[str]:
        """Item keys of the fan-out members this attempt's own job ran to success.

        A member's task row is matched by its name (`<template>-<item key>`; a job of one
        task may name its row after the job); with `outputs`, only when none of the
        member's declared outputs went unconfirmed.
        """
        served = {step.item for step in self.cache if step.hit}
        members = self.key.members
        rows = {row.task_name: row.status for row in self.tasks}
        names = [shape.task_name for shape in self.task_shapes] or [
            f"{m.state}-{m.item}" for m in members if m.item and m.item not in served
        ]
        if len(names) == 1 and len(rows) == 1:
            rows = {sanitize_task_name(names[0]): next(iter(rows.values()))}
        unconfirmed = set(self.unconfirmed_outputs) if outputs else set()
        ran = set()
        for index, member in enumerate(members):
            declared = self.planned[index].outputs if index < len(self.planned) else []
            row = rows.get(sanitize_task_name(f"{member.state}-{member.item}"))
            if member.item and row is JobStatus.SUCCEEDED and not any(a.uri in unconfirmed for a in declared):
                ran.add(member.item)
        return ran


def latest_attempts(waves: list[WaveAttemptRecord]) -> dict[WaveKey, WaveAttemptRecord]:
    """Return the newest attempt of each wave key, in first-seen key order."""
    latest: dict[WaveKey, WaveAttemptRecord] = {}
    for wave in waves:
        current = latest.get(wave.key)
        if current is None or wave.attempt >= current.attempt:
            latest[wave.key] = wave
    return latest
