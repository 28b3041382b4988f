"""Views derived from the ledger: per-stage records, manifest steps, `manifest.json`, `status.json`.

Shapes follow the reference's `run_state.py` (`RunManifest`, `RuntimeRunState`,
its stage projection): npaflow's additions are additive fields only.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from npaflow.document.models import Artifact
from npaflow.ids import RunId
from npaflow.presets import STRICT
from npaflow.runtime.ledger.attempt import TaskRow, WaveAttemptRecord
from npaflow.runtime.ledger.models import RUN_SCHEMA, StageRecord
from npaflow.runtime.ledger.records import PlannedStep
from npaflow.runtime.usage import RunUsage
from npaflow.runtime.vocabulary import StepStatus, WaveStatus
from npaflow.waves import WaveKey


class StageState(StrEnum):
    """A stage's normalized state, the reference's `_normalized_stage_state` vocabulary."""

    SUCCEEDED = "SUCCEEDED"
    CANCELLED = "CANCELLED"
    FAILED = "FAILED"
    FAILED_SETUP = "FAILED_SETUP"
    FAILED_STARTUP = "FAILED_STARTUP"
    UNKNOWN = "UNKNOWN"


#: Raw statuses (any source: task rows, SkyPilot, the ledger, the reference) and what they mean.
_STAGE_ALIASES: dict[str, StageState] = {
    "OK": StageState.SUCCEEDED,
    "SUCCESS": StageState.SUCCEEDED,
    "COMPLETED": StageState.SUCCEEDED,
    "SUCCEEDED": StageState.SUCCEEDED,
    "CANCELED": StageState.CANCELLED,
    "CANCELLED": StageState.CANCELLED,
    "ABORTED": StageState.CANCELLED,
    "FAILED_STARTUP": StageState.FAILED_STARTUP,
    "FAILED_SETUP": StageState.FAILED_SETUP,
    "FAILURE": StageState.FAILED,
    "ERROR": StageState.FAILED,
    "BLOCKED": StageState.FAILED,
    "": StageState.UNKNOWN,
}


def normalize_stage_state(raw: str) -> str:
    """Normalize a task/sky/wave status the way the reference's stage view does.

    Statuses it does not know (RUNNING, PENDING, ...) are kept, upper-cased.
    """
    text = (raw or "").strip().upper().replace("-", "_")
    known = _STAGE_ALIASES.get(text)
    if known is not None:
        return known.value
    return StageState.FAILED.value if text.startswith("FAILED") else text


def member_row(wave: WaveAttemptRecord, index: int) -> TaskRow | None:
    """The task row of the wave's `index`-th member: matched by job id and task id.

    Task ids number the tasks of a job in YAML order, which is member order;
    names are not used (SkyPilot renames a single task to the job name).
    """
    for row in wave.tasks:
        if row.task_id == index and (not row.job_id or row.job_id == wave.job_id):
            return row
    return None


def stage_records(wave: WaveAttemptRecord) -> list[StageRecord]:
    """Project one wave attempt onto one record per member stage (reference stage projection)."""
    records = []
    newest = wave.observations[-1] if wave.observations else None
    sky_status = wave.sky_status.value if wave.sky_status else ""
    final = wave.status.value if wave.status.is_final() else ""
    for index, member in enumerate(wave.key.members):
        row = member_row(wave, index)
        iteration = member.iteration
        records.append(
            StageRecord(
                key=f"{member.state}#{iteration}" if iteration is not None else member.state,
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
                started_at=row.start_at if row else "",
                finished_at=(row.end_at if row else "") or wave.ended_at,
                last_observed_at=newest.observed_at if newest else "",
                last_scheduler_state=(row.status.value if row else "") or sky_status or "UNKNOWN",
                last_heartbeat_at=row.last_progress_at if row else "",
                heartbeat_source="scheduler_task_progress" if row and row.last_progress_at else "",
                artifact_locations=list(wave.outputs),
                terminal_outcome=final,
            )
        )
    return records


class ManifestStep(BaseModel):
    """One step of `manifest.json`: the newest attempt of one member stage (reference §6.9)."""

    model_config = STRICT | ConfigDict(populate_by_name=True)

    state: str
    iteration: int | None = None
    status: StepStatus
    job_id: str = ""
    job_name: str = ""
    sky_status: str = ""
    wave_key: WaveKey
    group: str = ""
    tool_ref: str = ""
    resources: str = "default"
    resources_profile: dict[str, JsonValue] = Field(default_factory=dict)
    inputs: list[Artifact] = Field(default_factory=list)
    outputs: list[Artifact] = Field(default_factory=list)
    error: str = ""
    attempt: int = 1  # ours: which attempt this step's record comes from
    image: str = ""  # ours: the image as chosen
    image_digest: str = ""  # ours: the digest launched ("" = the tag, unpinned)
    item: str = ""  # ours: a fan-out member's item key (its task name's suffix)
    item_label: str = ""  # ours: and its item as displays name it


def manifest_steps(wave: WaveAttemptRecord) -> list[ManifestStep]:
    """The manifest steps of one wave attempt, one per member, with what the plan made of each."""
    status = wave.status.step_status()
    carried = {member.item: member for member in wave.carried}  # ran by an earlier attempt's job
    succeeded = _members_succeeded(wave)
    steps = []
    for index, member in enumerate(wave.key.members):
        planned = wave.planned[index] if index < len(wave.planned) else PlannedStep(state=member.state)
        ran = carried.get(member.item) if member.item else None
        steps.append(
            ManifestStep(
                state=member.state,
                iteration=member.iteration,
                status=StepStatus.OK if member.item in succeeded else status,
                job_id=ran.job_id if ran else wave.job_id,
                job_name=ran.job_name if ran else wave.job_name,
                sky_status=wave.sky_status.value if wave.sky_status else "",
                wave_key=wave.key,
                group=wave.group,
                tool_ref=planned.tool_ref,
                resources=planned.resources,
                resources_profile=planned.resources_profile,
                inputs=planned.inputs,
                outputs=planned.outputs,
                error=wave.error,
                attempt=ran.attempt if ran else wave.attempt,
                image=planned.image,
                image_digest=planned.image_digest,
                item=member.item,
                item_label=wave.items[index] if index < len(wave.items) else "",
            )
        )
    return steps


def _members_succeeded(wave: WaveAttemptRecord) -> set[str]:
    """The members of a failed fan-out batch that succeeded all the same (each member stands alone)."""
    return wave.members_done() if wave.items and wave.status is WaveStatus.FAILED else set()


class InputSource(BaseModel):
    """`manifest.json` `input_source`: a mapping in the reference; npaflow names where the spec came from."""

    model_config = STRICT

    spec: str = ""  # "inline" (the spec travelled in the run's input) or the spec's URI


class ManifestDocument(BaseModel):
    """`manifest.json` (npa.workflow.run.v1)."""

    model_config = STRICT

    schema_version: str = RUN_SCHEMA
    workflow: str
    run_id: RunId
    api_version: str
    run_prefix_uri: str = ""
    status: str
    sky_job_id: str = ""
    updated_at: str = ""
    steps: list[ManifestStep] = Field(default_factory=list)
    input_source: InputSource = Field(default_factory=InputSource)


class StatusDocument(BaseModel):
    """`status.json` (npa.workflow.run.v1): the manifest's status, as the reference writes it."""

    model_config = STRICT

    schema_version: str = RUN_SCHEMA
    run_id: RunId
    workflow: str
    status: str
    updated_at: str = ""
    step_count: int = 0
    usage: RunUsage = Field(default_factory=RunUsage)  # ours: GPU- and node-hours
