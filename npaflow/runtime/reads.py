"""What the CLI reads through a worker: a run's job logs and its artifacts (helper workflows' models)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from npaflow.ids import RunId
from npaflow.presets import FROZEN
from npaflow.runtime.messages import JobRef
from npaflow.runtime.request import BackendName
from npaflow.runtime.summary import WaveView


class ReadJobLogsInput(BaseModel):
    """Read the logs of one job where it runs (its backend, its worker)."""

    model_config = FROZEN

    job: JobRef
    task: str = ""
    tail_lines: int = 2000


class JobLogs(BaseModel):
    """A job's (tail-limited) logs."""

    model_config = FROZEN

    text: str = ""


class JobLogsRequest(BaseModel):
    """Input of the `NpaflowJobLogs` workflow: the jobs whose logs the CLI wants.

    With `ledger_uri` it first reads the run's launched attempts from its ledger: how
    `npaflow logs` finds the jobs of an ended run that no worker of its version answers.
    """

    model_config = FROZEN

    jobs: list[ReadJobLogsInput] = Field(default_factory=list)
    ledger_uri: str = ""


class JobLogsResult(BaseModel):
    """Result of the `NpaflowJobLogs` workflow: one entry per requested job, in order."""

    model_config = FROZEN

    logs: list[JobLogs] = Field(default_factory=list)
    waves: list[WaveView] = Field(default_factory=list)  # with ledger_uri: its launched attempts


def job_log_reads(
    waves: list[WaveView], backend: BackendName, task: str, tail_lines: int
) -> list[ReadJobLogsInput]:
    """The reads of these attempts' jobs: each through `backend`, on the worker that holds it."""
    return [
        ReadJobLogsInput(
            job=JobRef(
                backend=backend,
                job_id=wave.job_id,
                job_name=wave.job_name,
                worker_id=wave.worker_id,
                worker_task_queue=wave.worker_task_queue,
            ),
            task=task,
            tail_lines=tail_lines,
        )
        for wave in waves
    ]


class RunWavesInput(BaseModel):
    """Input of `read_run_waves`: the run's ledger, and which of its attempts.

    `before` None: every attempt that launched a job (the logs of an ended run). An
    index: one page of every attempt before it, as the `status` query pages them (-1:
    the newest), for the status of an ended run whose summary kept only its newest.
    """

    model_config = FROZEN

    ledger_uri: str
    before: int | None = None


class RunWaves(BaseModel):
    """The attempts asked for, as the run's ledger recorded them; a page says where it starts."""

    model_config = FROZEN

    waves: list[WaveView] = Field(default_factory=list)
    start: int = 0


class ListArtifactsInput(BaseModel):
    """Input of `list_artifacts` (and the `NpaflowArtifacts` workflow): a run's ledger, one state or all."""

    model_config = FROZEN

    ledger_uri: str
    state: str = ""


class RenderReportInput(BaseModel):
    """Input of `render_report` (and the `NpaflowRunReport` workflow): a run's ledger."""

    model_config = FROZEN

    ledger_uri: str
    write: bool = False  # also write report.html beside runtime.json


class RunReport(BaseModel):
    """A run's report.html, and where it was written ("" when it was not)."""

    model_config = FROZEN

    run_id: str
    html: str
    written_uri: str = ""


class ArtifactRow(BaseModel):
    """One artifact of a run: a wave's declared output, a decision it read, a trigger's objects."""

    model_config = FROZEN

    kind: Literal["output", "decision", "trigger"]
    state: str
    uri: str
    wave_key: str = ""
    attempt: int = 0
    item: str = ""  # a fan-out member's item, as displays name it (npaflow/fanout/labels.py)
    schema_label: str = ""  # an output's declared schema
    exists: bool | None = None  # now, when checked; None for a prefix watched by a trigger
    detail: str = ""  # the decision taken and its source; a trigger's object count


class RunArtifacts(BaseModel):
    """Everything `npaflow artifacts` shows, in the order the run made or read it."""

    model_config = FROZEN

    run_id: RunId
    rows: list[ArtifactRow] = Field(default_factory=list)
