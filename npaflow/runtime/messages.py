"""Activity inputs and results: one model each, shared by the workflow and the activities."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from npaflow.catalog.models import ToolCatalog
from npaflow.runtime.ledger import (
    CancellationState,
    DecisionRecord,
    LedgerDelta,
    Observation,
    TaskRow,
    Watermark,
    WaveAttemptRecord,
)
from npaflow.runtime.request import BackendName
from npaflow.spec.models import Trigger, WorkflowSpec
from npaflow.traversal.models import WaveBatch

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class LoadSpecInput(BaseModel):
    """Read (when given a URI), parse and validate the spec of a run."""

    model_config = _FROZEN

    run_id: str
    spec: str = ""
    spec_uri: str = ""
    vars: dict[str, str] = Field(default_factory=dict)
    catalogs: list[str] = Field(default_factory=list)
    assume_decision: str = ""


class PriorRun(BaseModel):
    """What an earlier execution of the same run id left in the ledger."""

    model_config = _FROZEN

    waves: list[WaveAttemptRecord] = Field(default_factory=list)
    decisions: list[DecisionRecord] = Field(default_factory=list)
    watermarks: dict[str, Watermark] = Field(default_factory=dict)


class LoadedSpec(BaseModel):
    """A validated spec plus everything the workflow needs to walk it deterministically."""

    model_config = _FROZEN

    spec: WorkflowSpec
    catalog: ToolCatalog
    workflow_yaml: str
    ledger_uri: str
    input_source: str
    plan_fingerprint: str = ""
    prior: PriorRun = Field(default_factory=PriorRun)


class LaunchWaveInput(BaseModel):
    """Render one wave attempt, reconcile by its unique name, and launch it at most once."""

    model_config = _FROZEN

    run_id: str
    workflow: str
    batch: WaveBatch
    attempt: int
    backend: BackendName
    catalog: ToolCatalog
    secret_env: list[str] = Field(default_factory=list)
    infra: str = ""


class LaunchResult(BaseModel):
    """The exact job a wave attempt runs as."""

    model_config = _FROZEN

    job_id: str
    job_name: str
    launch_token: str
    adopted: bool = False
    reconciliation: list[str] = Field(default_factory=list)
    credential_names: list[str] = Field(default_factory=list)
    credential_fingerprint: str = ""


class AwaitWaveInput(BaseModel):
    """Poll one job until it is terminal, the deadline passes, or queries keep failing."""

    model_config = _FROZEN

    job_id: str
    job_name: str
    wave_key: str
    backend: BackendName
    poll_seconds: float
    max_wait_seconds: float


class AwaitResult(BaseModel):
    """How polling ended, with the evidence gathered on the way."""

    model_config = _FROZEN

    status: str
    timed_out: bool = False
    error: str = ""
    tasks: list[TaskRow] = Field(default_factory=list)
    observations: list[Observation] = Field(default_factory=list)
    max_concurrent_observed: int = 0
    status_errors: list[str] = Field(default_factory=list)


class CancelWaveInput(BaseModel):
    """Cancel one job by its exact id and wait until it is terminal."""

    model_config = _FROZEN

    job_id: str
    backend: BackendName
    verify_seconds: float = 60


class CancelResult(BaseModel):
    """What cancelling achieved."""

    model_config = _FROZEN

    state: CancellationState
    status: str = ""
    error: str = ""


class CheckOutputsInput(BaseModel):
    """Check that every declared output exists and is not empty."""

    model_config = _FROZEN

    uris: list[str]


class CheckOutputsResult(BaseModel):
    """The declared outputs that are missing."""

    model_config = _FROZEN

    missing: list[str] = Field(default_factory=list)


class ReadDecisionInput(BaseModel):
    """Read a decision artifact; `fallback` applies only when the artifact is missing."""

    model_config = _FROZEN

    state: str
    uri: str
    fallback: str = ""


class DecisionResult(BaseModel):
    """The normalized decision, the ledger record, and an error that fails the run."""

    model_config = _FROZEN

    decision: str = ""
    record: DecisionRecord
    error: str = ""


class WaitTriggerInput(BaseModel):
    """Wait until a prefix holds `min_objects` objects."""

    model_config = _FROZEN

    state: str
    uri: str
    trigger: Trigger
    max_wait_seconds: float


class TriggerResult(BaseModel):
    """The watermark when the trigger fired, or why it gave up."""

    model_config = _FROZEN

    watermark: Watermark | None = None
    error: str = ""


class ExportLedgerInput(BaseModel):
    """Merge a ledger delta into the run's stored ledger and rewrite its views."""

    model_config = _FROZEN

    run_id: str
    workflow: str
    api_version: str
    ledger_uri: str
    input_source: str = ""
    delta: LedgerDelta
    workflow_yaml: str = ""


class ExportResult(BaseModel):
    """Where the ledger now lives."""

    model_config = _FROZEN

    runtime_state_uri: str


class RequestCancelInput(BaseModel):
    """The execution to cancel (the run's own) and why."""

    model_config = _FROZEN

    workflow_id: str
    run_id: str
    reason: str = ""
