"""Views derived from the ledger: per-stage records, the run manifest, status.json."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from npaflow.runtime.ledger import (
    RUN_SCHEMA,
    RuntimeLedger,
    StageRecord,
    TaskRow,
    WaveAttemptRecord,
    WaveStatus,
)
from npaflow.runtime.status import JobStatus
from npaflow.runtime.usage import RunUsage
from npaflow.waves import WaveKey

_SUCCESS = {"OK", "SUCCESS", "COMPLETED", "SUCCEEDED"}
_CANCELLED = {"CANCELED", "CANCELLED", "ABORTED"}
_OPEN = ConfigDict(extra="forbid")


def normalize_stage_state(raw: str) -> str:
    """Normalize a task/sky/wave status the way the reference's stage view does."""
    text = (raw or "").strip().upper().replace("-", "_")
    if not text:
        return "UNKNOWN"
    if text in _SUCCESS:
        return "SUCCEEDED"
    if text in _CANCELLED:
        return "CANCELLED"
    if text in ("FAILED_STARTUP", "FAILED_SETUP"):
        return text
    if text.startswith("FAILED") or text in ("FAILURE", "ERROR", "BLOCKED"):
        return "FAILED"
    return text


def member_row(wave: WaveAttemptRecord, index: int) -> TaskRow | None:
    """The task row of the wave's `index`-th member: matched by job id and task id.

    Task ids number the tasks of a job in YAML order, which is member order;
    names are not used (SkyPilot renames a single task to the job name).
    """
    for row in wave.tasks:
        if row.task_id == index and (not row.job_id or row.job_id == wave.job_id):
            return row
    return None


def _terminal_outcome(wave: WaveAttemptRecord) -> str:
    if wave.sky_status is JobStatus.CANCELLED or wave.status is WaveStatus.CANCELLED:
        return "cancelled"
    return wave.status.value if wave.status in (WaveStatus.SUCCEEDED, WaveStatus.FAILED) else ""


def stage_records(wave: WaveAttemptRecord) -> list[StageRecord]:
    """Project one wave attempt onto one record per member stage."""
    records = []
    newest = wave.observations[-1] if wave.observations else None
    sky_status = wave.sky_status.value if wave.sky_status else ""
    for index, member in enumerate(wave.key.members):
        row = member_row(wave, index)
        iteration = member.iteration
        records.append(
            StageRecord(
                key=f"{member.state}#{iteration}" if iteration else member.state,
                stage=member.state,
                iteration=iteration,
                logical_state=normalize_stage_state(
                    (row.status.value if row else "") or sky_status or wave.status.value
                ),
                attempt=wave.attempt,
                managed_job_id=wave.job_id,
                job_group_id=wave.group or wave.job_name,
                job_name=wave.job_name,
                wave_key=wave.key,
                submitted_at=wave.started_at,
                started_at=(row.start_at if row else "") or wave.ended_at,
                finished_at=(row.end_at if row else "") or wave.ended_at,
                last_observed_at=newest.observed_at if newest else "",
                last_scheduler_state=newest.scheduler_state.value if newest else sky_status,
                last_heartbeat_at=row.last_progress_at if row else "",
                heartbeat_source="scheduler_task_progress" if row and row.last_progress_at else "",
                artifact_locations=[a.uri for a in wave.outputs],
                terminal_outcome=_terminal_outcome(wave),
            )
        )
    return records


def derive_stages(ledger: RuntimeLedger) -> list[StageRecord]:
    """Upsert every wave attempt's stage records, keyed by (stage key, attempt)."""
    stages: dict[tuple[str, int], StageRecord] = {}
    for wave in ledger.waves:
        for record in stage_records(wave):
            stages[(record.key, wave.attempt)] = record
    return list(stages.values())


class ManifestStep(BaseModel):
    """One step of `manifest.json`: the newest attempt of one member stage."""

    model_config = _OPEN

    state: str
    iteration: int | None = None
    status: str
    job_id: str = ""
    job_name: str = ""
    sky_status: str = ""
    wave_key: WaveKey
    group: str = ""
    error: str = ""


class ManifestDocument(BaseModel):
    """`manifest.json` (npa.workflow.run.v1)."""

    model_config = _OPEN

    schema_version: str = RUN_SCHEMA
    workflow: str
    run_id: str
    api_version: str
    run_prefix_uri: str = ""
    status: str
    sky_job_id: str = ""
    updated_at: str = ""
    steps: list[ManifestStep] = Field(default_factory=list)
    input_source: str = ""


class StatusDocument(BaseModel):
    """`status.json` (npa.workflow.run.v1)."""

    model_config = _OPEN

    schema_version: str = RUN_SCHEMA
    run_id: str
    workflow: str
    status: str
    updated_at: str = ""
    step_count: int = 0
    usage: RunUsage = Field(default_factory=RunUsage)  # ours: GPU- and node-hours


_MANIFEST_STATUS = {"succeeded": "completed", "failed": "failed", "cancelled": "failed"}


def manifest_document(ledger: RuntimeLedger, input_source: str) -> ManifestDocument:
    """Return `manifest.json` for the run."""
    steps = []
    for key, wave in ledger.latest_attempts().items():
        status = "ok" if wave.status is WaveStatus.SUCCEEDED else wave.status.value
        for member in key.members:
            steps.append(
                ManifestStep(
                    state=member.state,
                    iteration=member.iteration,
                    status=status,
                    job_id=wave.job_id,
                    job_name=wave.job_name,
                    sky_status=wave.sky_status.value if wave.sky_status else "",
                    wave_key=key,
                    group=wave.group,
                    error=wave.error,
                )
            )
    return ManifestDocument(
        workflow=ledger.workflow,
        run_id=ledger.run_id,
        api_version=ledger.api_version,
        run_prefix_uri=ledger.run_prefix_uri,
        status=_MANIFEST_STATUS.get(ledger.status.value, ledger.status.value),
        updated_at=ledger.updated_at,
        steps=steps,
        input_source=input_source,
    )


def status_document(ledger: RuntimeLedger) -> StatusDocument:
    """Return `status.json` for the run."""
    return StatusDocument(
        run_id=ledger.run_id,
        workflow=ledger.workflow,
        status=ledger.status.value,
        updated_at=ledger.updated_at,
        step_count=sum(len(w.key.members) for w in ledger.latest_attempts().values()),
        usage=ledger.usage,
    )
