"""Activity inputs and results: one model each, shared by the workflow and the activities.

The activity names these bind to live in npaflow/runtime/contract.py.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from npaflow.catalog.models import ToolCatalog
from npaflow.document.models import Trigger
from npaflow.ids import RunId
from npaflow.images import ImageBinding
from npaflow.presets import FROZEN
from npaflow.runtime.ledger import (
    DecisionRecord,
    LedgerDelta,
    Observation,
    TaskRow,
    Watermark,
)
from npaflow.runtime.request import BackendName
from npaflow.runtime.status import FailureClass, JobStatus
from npaflow.runtime.vocabulary import CancellationState, HeartbeatPhase
from npaflow.traversal.models import Wave
from npaflow.waves import WaveKey


class JobRef(BaseModel):
    """The exact job one wave attempt runs as, and where its activities must run."""

    model_config = FROZEN

    backend: BackendName
    job_id: str
    job_name: str = ""
    worker_id: str = ""  # local backend: the worker whose host runs the job
    worker_task_queue: str = ""  # local backend: that worker's own task queue


class LaunchWaveInput(BaseModel):
    """Render one wave attempt, reconcile it with what the backend knows, launch it at most once."""

    model_config = FROZEN

    run_id: RunId
    workflow: str
    wave: Wave
    attempt: int
    backend: BackendName
    catalog: ToolCatalog
    secret_env: list[str] = Field(default_factory=list)
    infra: str = ""
    images: ImageBinding = Field(default_factory=ImageBinding)  # the run's overrides and pinned digests
    ledger_uri: str = ""
    reconcile: bool = False  # an earlier execution may already have launched this attempt
    transport_recovery_seconds: float = 600


class LaunchResult(BaseModel):
    """The exact job a wave attempt runs as, and how it was identified."""

    model_config = FROZEN

    job: JobRef
    launch_token: str
    request_id: str = ""
    adopted: bool = False
    reconciliation: list[str] = Field(default_factory=list)
    credential_names: list[str] = Field(default_factory=list)
    credential_fingerprint: str = ""


class AwaitWaveInput(BaseModel):
    """Poll one job until it is terminal, the deadline passes, or capacity never comes."""

    model_config = FROZEN

    job: JobRef
    wave_key: WaveKey
    poll_seconds: float
    max_wait_seconds: float
    pending_timeout_seconds: float = 0
    transport_recovery_seconds: float = 600
    #: How long the job may hold its accelerators before the run's GPU-hour budget is spent (0: no budget).
    budget_seconds: float = 0
    budget_text: str = ""  # what the budget and its spending were, for the error


class AwaitEnd(StrEnum):
    """Why polling stopped."""

    TERMINAL = "terminal"  # the job reached a terminal status
    TIMED_OUT = "timed_out"  # max_wait_seconds passed first
    CAPACITY_TIMEOUT = "capacity_timeout"  # waited for resources past pending_timeout_seconds
    UNREADABLE = "unreadable"  # status queries kept failing past the recovery deadline
    LOST = "lost"  # absent from a tick that asked, its own query and a later tick
    BUDGET = "budget"  # the run's GPU-hour budget would be overspent: the job is cancelled


class AwaitResult(BaseModel):
    """How polling ended, with the evidence gathered on the way."""

    model_config = FROZEN

    status: JobStatus
    end: AwaitEnd = AwaitEnd.TERMINAL
    error: str = ""
    failure_class: FailureClass | None = None
    tasks: list[TaskRow] = Field(default_factory=list)
    observations: list[Observation] = Field(default_factory=list)
    max_concurrent_observed: int = 0
    status_errors: list[str] = Field(default_factory=list)
    log_tail: str = ""  # the last lines of a failed job's log, so its error says what went wrong


class CancelWaveInput(BaseModel):
    """Cancel one job by its exact id and wait until it is terminal."""

    model_config = FROZEN

    job: JobRef
    verify_seconds: float = 60


class CancelResult(BaseModel):
    """What cancelling achieved."""

    model_config = FROZEN

    state: CancellationState
    status: JobStatus = JobStatus.UNKNOWN
    error: str = ""
    tasks: list[TaskRow] = Field(default_factory=list)  # the job's rows as last seen: its hours' clock


class CheckOutputsInput(BaseModel):
    """Check that every declared output of a wave exists and is not empty."""

    model_config = FROZEN

    wave_key: WaveKey | None = None
    uris: list[str]


class CheckOutputsResult(BaseModel):
    """The declared outputs that are definitely missing."""

    model_config = FROZEN

    missing: list[str] = Field(default_factory=list)


class ReadDecisionInput(BaseModel):
    """Read a decision artifact; `fallback` applies only when the artifact is missing."""

    model_config = FROZEN

    state: str
    uri: str
    fallback: str = ""


class DecisionResult(BaseModel):
    """The normalized decision, the ledger record, and an error that fails the run."""

    model_config = FROZEN

    decision: str = ""
    record: DecisionRecord
    error: str = ""


class WaitTriggerInput(BaseModel):
    """Wait until a prefix holds `min_objects` objects."""

    model_config = FROZEN

    state: str
    uri: str
    trigger: Trigger
    max_wait_seconds: float


class TriggerResult(BaseModel):
    """The watermark when the trigger fired, or why it gave up."""

    model_config = FROZEN

    watermark: Watermark | None = None
    error: str = ""


class ExportLedgerInput(BaseModel):
    """Merge a ledger delta into the run's stored ledger and rewrite its views."""

    model_config = FROZEN

    run_id: RunId
    workflow: str
    api_version: str
    ledger_uri: str
    input_source: str = ""
    delta: LedgerDelta
    workflow_yaml: str = ""


class ExportResult(BaseModel):
    """Where the ledger now lives."""

    model_config = FROZEN

    runtime_state_uri: str


class RequestCancelInput(BaseModel):
    """The execution to cancel (the run's own) and why."""

    model_config = FROZEN

    workflow_id: str
    execution_id: str
    reason: str = ""


class HeartbeatDetails(BaseModel):
    """The one shape every heartbeating activity reports; a retried attempt resumes from it."""

    model_config = ConfigDict(extra="ignore")

    phase: HeartbeatPhase = HeartbeatPhase.NONE
    worker_id: str = ""  # the worker that started a launch (host-bound jobs live there)
    job_id: str = ""
    request_id: str = ""
    started_at: float = 0.0  # epoch seconds of the first attempt: deadlines survive crashes
    polls: int = 0
    last_status: JobStatus = JobStatus.SUBMITTED
    consecutive_errors: int = 0
    errors_since: float = 0.0  # first of the current run of failed calls (transport recovery)
    last_error: str = ""  # the newest of them (what `npaflow status` quotes while it lasts)
    pending_since: float = 0.0  # first poll that saw the job waiting for resources
    max_concurrent: int = 0
    objects: int = 0  # trigger waits: objects seen at the last listing
    #: await: each task's start as the backend reported it (task id -> ledger timestamp), so a
    #: running attempt's start is known before its await ends (the page's bars, its spend)
    task_starts: dict[str, str] = Field(default_factory=dict)
