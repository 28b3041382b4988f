"""The `npa.workflow.runtime.v1` ledger: records, deltas, and merging (reference §6.6).

The workflow sends only deltas (what changed); the export activity merges them
into the stored document, so history never carries the whole ledger twice.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, JsonValue

from npaflow.fanout.models import FanOutRecord
from npaflow.ids import RunId
from npaflow.images import ImageBinding
from npaflow.presets import FROZEN, STRICT
from npaflow.runtime.ledger.attempt import (
    ArtifactList,
    Cancellation,
    MaybeJobStatus,
    WaveAttemptRecord,
    latest_attempts,
)
from npaflow.runtime.ledger.records import (
    CachedStep,
    CarriedMember,
    DecisionRecord,
    PlanChangeRecord,
    Watermark,
)
from npaflow.runtime.notifications import NotificationRecord
from npaflow.runtime.quota_waits import QuotaWait
from npaflow.runtime.status import JobStatus
from npaflow.runtime.usage import RunUsage
from npaflow.runtime.vocabulary import (
    LedgerStatus,
    RunEnding,
    WaveStatus,
)
from npaflow.traversal.models import WaveKind
from npaflow.waves import WaveKey

#: Ledger timestamps: UTC, second precision, a `Z` suffix (reference §6.6).
RUNTIME_SCHEMA = "npa.workflow.runtime.v1"
RUN_SCHEMA = "npa.workflow.run.v1"


class FinishedWave(BaseModel):
    """What a later execution needs of an earlier one's finished attempt: enough to replay it.

    Besides what replaying needs, what the run's views show of it (its members' items,
    the worker that held its job, the cache's hits, members a retry carried), so a
    resumed or continued run tells the same story as its ledger; its rows and
    observations stay in the ledger.
    """

    model_config = FROZEN

    key: WaveKey
    attempt: int = 1
    status: WaveStatus
    states: list[str] = Field(default_factory=list)
    items: list[str] = Field(default_factory=list)
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
    worker_id: str = ""
    worker_task_queue: str = ""
    cache: list[CachedStep] = Field(default_factory=list)
    carried: list[CarriedMember] = Field(default_factory=list)

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
    fan_outs: dict[str, FanOutRecord] = Field(default_factory=dict)  # upserted by `group#occurrence`
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
    fan_outs: dict[str, FanOutRecord] = Field(default_factory=dict)  # ours: each forEach occurrence
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
