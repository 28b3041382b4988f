"""The `npa.workflow.runtime.v1` ledger: records, deltas, and merging (reference §6.6).

The workflow sends only deltas (what changed); the export activity merges them
into the stored document, so history never carries the whole ledger twice.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, Field, JsonValue, PlainSerializer

from npaflow.document.models import Artifact
from npaflow.ids import RunId
from npaflow.images import ImageBinding
from npaflow.presets import FROZEN, STRICT
from npaflow.runtime.ledger.records import (
    CachedStep,
    DecisionRecord,
    PlanChangeRecord,
    PlannedStep,
    Watermark,
)
from npaflow.runtime.notifications import NotificationRecord
from npaflow.runtime.quota_waits import QuotaWait
from npaflow.runtime.status import FailureClass, JobStatus
from npaflow.runtime.usage import RunUsage, TaskShape, attempt_hours
from npaflow.runtime.vocabulary import (
    CancellationState,
    LedgerStatus,
    RecoveryDecision,
    RunEnding,
    WaveStatus,
)
from npaflow.traversal.models import WaveKind
from npaflow.waves import WaveKey

#: Ledger timestamps: UTC, second precision, a `Z` suffix (reference §6.6).
RUNTIME_SCHEMA = "npa.workflow.runtime.v1"
RUN_SCHEMA = "npa.workflow.run.v1"


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

    def succeeded(self) -> bool:
        """True for an attempt that succeeded (its hours are not spent on a failure)."""
        return self.status is WaveStatus.SUCCEEDED


class FinishedWave(BaseModel):
    """What a later execution needs of an earlier one's finished attempt: enough to replay it."""

    model_config = FROZEN

    key: WaveKey
    attempt: int = 1
    status: WaveStatus
    states: list[str] = Field(default_factory=list)
    kind: WaveKind = WaveKind.SERIAL
    group: str = ""
    job_id: str = ""
    job_name: str = ""
    sky_status: MaybeJobStatus = None
    outputs: ArtifactList = Field(default_factory=list)
    started_at: str = ""
    ended_at: str = ""
    gpu_hours: float = 0.0
    node_hours: float = 0.0

    @classmethod
    def of(cls, record: WaveAttemptRecord) -> FinishedWave:
        """The summary of a ledger record."""
        return cls(**{name: getattr(record, name) for name in cls.model_fields})

    def record(self) -> WaveAttemptRecord:
        """A ledger record holding what this summary knows (no rows, observations or notes)."""
        return WaveAttemptRecord(**dict(self))


class StageRecord(BaseModel):
    """One member stage of one wave attempt (reference §6.6 stage projection)."""

    model_config = STRICT

    key: str
    stage: str
    iteration: int | None = None
    logical_state: str = ""
    attempt: int = 1
    managed_job_id: str = ""
    job_group_id: str = ""
    job_name: str = ""
    wave_key: WaveKey
    submitted_at: str = ""
    started_at: str = ""
    finished_at: str = ""
    last_observed_at: str = ""
    last_scheduler_state: str = ""
    last_heartbeat_at: str = ""
    heartbeat_source: str = ""
    pending_reason: dict[str, JsonValue] = Field(default_factory=dict)
    log_location: str = ""
    artifact_locations: ArtifactList = Field(default_factory=list)
    terminal_outcome: str = ""
    provenance: str = "runtime_wave_projection"
    attribution_ambiguous: bool = False


class ReconciledJob(BaseModel):
    """One orphaned job, cancelled by exact id: what the ledger and `npaflow status` show."""

    model_config = STRICT

    job_id: str
    job_name: str = ""
    backend: str = ""
    wave_key: str = ""
    attempt: int = 1
    run_ending: RunEnding = RunEnding.TERMINATED
    cancellation: Cancellation = Field(default_factory=Cancellation)
    final_status: JobStatus | None = None
    at: str = ""
    skipped: str = ""  # why it was left alone (a new execution owns it now)


class LedgerDelta(BaseModel):
    """What changed since the last export; merged into the stored ledger."""

    model_config = FROZEN

    status: LedgerStatus | None = None
    error: str | None = None
    plan_fingerprint: str = ""
    waves: list[WaveAttemptRecord] = Field(default_factory=list)
    decisions: list[DecisionRecord] = Field(default_factory=list)
    #: Where `decisions` start in the run's list: a retried export rewrites them in place.
    decision_offset: int | None = None
    watermarks: dict[str, Watermark] = Field(default_factory=dict)
    cancel_reason: str = ""
    plan_change: PlanChangeRecord | None = None
    images: ImageBinding | None = None  # with the spec: how the run's images were checked and pinned
    notifications: list[NotificationRecord] = Field(default_factory=list)  # upserted by id
    reconciled: list[ReconciledJob] = Field(default_factory=list)  # upserted by job id
    quota_waits: list[QuotaWait] = Field(default_factory=list)  # upserted by id


class RuntimeLedger(BaseModel):
    """The whole `runtime.json` document (plus our additive fields)."""

    model_config = STRICT

    schema_version: str = RUNTIME_SCHEMA
    workflow: str
    run_id: RunId
    api_version: str
    status: LedgerStatus = LedgerStatus.RUNNING
    run_prefix_uri: str = ""
    plan_fingerprint: str = ""
    updated_at: str = ""
    waves: list[WaveAttemptRecord] = Field(default_factory=list)
    stages: list[StageRecord] = Field(default_factory=list)
    decisions: list[DecisionRecord] = Field(default_factory=list)
    watermarks: dict[str, Watermark] = Field(default_factory=dict)
    error: str = ""
    cancel_reason: str = ""
    usage: RunUsage = Field(default_factory=RunUsage)  # ours: GPU- and node-hours (usage.py)
    plan_changes: list[PlanChangeRecord] = Field(default_factory=list)  # ours: accepted edits
    notifications: list[NotificationRecord] = Field(default_factory=list)  # ours: webhook deliveries
    #: ours: jobs cancelled after their run ended without its cleanup (terminate, timeout)
    reconciled: list[ReconciledJob] = Field(default_factory=list)
    #: ours: the run's image overrides, the digests it launches, and whether preflight verified them
    images: ImageBinding | None = None
    quota_waits: list[QuotaWait] = Field(default_factory=list)  # ours: each wave's wait for GPUs

    def latest_attempts(self) -> dict[WaveKey, WaveAttemptRecord]:
        """Return the newest attempt recorded for each wave key."""
        return latest_attempts(self.waves)


def latest_attempts(waves: list[WaveAttemptRecord]) -> dict[WaveKey, WaveAttemptRecord]:
    """Return the newest attempt of each wave key, in first-seen key order."""
    latest: dict[WaveKey, WaveAttemptRecord] = {}
    for wave in waves:
        current = latest.get(wave.key)
        if current is None or wave.attempt >= current.attempt:
            latest[wave.key] = wave
    return latest
