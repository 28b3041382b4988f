"""What the orphan reconciler reads and writes: job owners, orphans, how a run ended.

A job launched by npaflow carries its owner (run id, namespace, task queue,
ledger) in the backend's own record, so a worker can tell, without the run's
workflow code, which run a live job belongs to and whether that run is still
open (DESIGN §3.5: no job outlives its run).
"""

from __future__ import annotations

from pydantic import BaseModel, Field, model_validator

from npaflow.ids import RunId
from npaflow.presets import FROZEN
from npaflow.runtime.ledger import ReconciledJob, TaskRow
from npaflow.runtime.messages import ExportResult, JobRef
from npaflow.runtime.status import JobStatus
from npaflow.runtime.usage import RunUsage
from npaflow.runtime.vocabulary import RunEnding, WaveStatus
from npaflow.waves import WaveKey

#: The reconcile workflow's id prefix: ':' is never in a run id, so no run can take its id.
RECONCILE_ID_PREFIX = "npaflow:reconcile:"


def reconcile_workflow_id(run_id: RunId) -> str:
    """The one reconcile workflow of a run (signal-with-start: every worker joins the same one)."""
    return RECONCILE_ID_PREFIX + run_id


class JobOwner(BaseModel):
    """The run a job belongs to, stored with the job by the backend at launch."""

    model_config = FROZEN

    run_id: RunId
    namespace: str
    task_queue: str
    ledger_uri: str = ""
    workflow: str = ""
    wave_key: str = ""
    attempt: int = 1


class LiveJob(BaseModel):
    """A job a backend reports as not terminal, with its owner when npaflow launched it."""

    model_config = FROZEN

    job: JobRef
    status: JobStatus
    owner: JobOwner | None = None


class EndedJob(BaseModel):
    """An in-flight attempt's job that ended on its own after its run closed: its own record."""

    model_config = FROZEN

    job_id: str
    status: JobStatus  # terminal, or ABSENT when the backend no longer lists it
    tasks: list[TaskRow] = Field(default_factory=list)
    #: For a job the ledger never named (its run closed first): the attempt, from its launch receipt.
    wave_key: str = ""
    attempt: int = 1
    job_name: str = ""


class LedgerClosure(BaseModel):
    """A closed run whose ledger was left open: where it is, and what its jobs' records say."""

    model_config = FROZEN

    ledger_uri: str
    workflow: str = ""
    ended: list[EndedJob] = Field(default_factory=list)


class OrphanBatch(BaseModel):
    """Jobs one sweep found whose run is closed (the reconcile workflow's input and signal).

    With `closure`, the sweep also found the run's ledger left open (no live job, or
    jobs that ended on their own): the workflow closes it.
    """

    model_config = FROZEN

    run_id: RunId
    ending: RunEnding
    jobs: list[LiveJob] = Field(default_factory=list)
    closure: LedgerClosure | None = None

    @model_validator(mode="after")
    def _owned_by_the_run(self) -> OrphanBatch:
        """Only the run's own jobs: the workflow cancels what it is given (a hand-made batch too)."""
        for live in self.jobs:
            if live.owner is None or live.owner.run_id != self.run_id:
                owner = live.owner.run_id if live.owner else "no run"
                raise ValueError(f"job {live.job.job_id} belongs to {owner}, not to run {self.run_id}")
        return self


class EndedAttempt(BaseModel):
    """An attempt the reconciler ended in the ledger, as the run's own views should now show it."""

    model_config = FROZEN

    key: WaveKey
    attempt: int
    status: WaveStatus
    sky_status: JobStatus | None = None
    ended_at: str = ""
    gpu_hours: float = 0.0
    node_hours: float = 0.0
    group: str = ""  # a fan-out batch's group, and how many members it holds
    members: int = 0


class LedgerAfter(BaseModel):
    """What a run's ledger says once the reconciler wrote it: the attempts it ended, the run's hours.

    The run's own answer still counts its last jobs as running (its code never saw
    them end); `npaflow status` and the run page show these instead (shown.py).
    """

    model_config = FROZEN

    usage: RunUsage
    ended: list[EndedAttempt] = Field(default_factory=list)

    def then(self, newer: LedgerAfter) -> LedgerAfter:
        """This, updated by a later write: its hours, and its attempts over these."""
        ended = {(a.key, a.attempt): a for a in [*self.ended, *newer.ended]}
        return LedgerAfter(usage=newer.usage, ended=list(ended.values()))


class LedgerWritten(ExportResult):
    """Where the ledger lives, and what it says now (None in histories of older workers)."""

    ledger: LedgerAfter | None = None


class ReconcileResult(BaseModel):
    """What one reconcile workflow did, and what the run's ledger says since (None: not written)."""

    model_config = FROZEN

    run_id: RunId
    jobs: list[ReconciledJob] = Field(default_factory=list)
    ledger: LedgerAfter | None = None

    def acted(self) -> bool:
        """True once it cancelled a job or wrote the run's ledger: the views take its word then."""
        return bool(self.jobs) or self.ledger is not None


class CheckRunInput(BaseModel):
    """Ask Temporal how a run's newest execution stands, and its ledger which jobs were kept."""

    model_config = FROZEN

    run_id: RunId
    ledger_uri: str = ""
    job_ids: list[str] = Field(default_factory=list)
    #: Also read the run's ledger (its memo names it) for what it still holds in flight.
    verify_jobs: bool = False


class RunStanding(BaseModel):
    """How a run stands; `known` False when Temporal could not say (then nothing is cancelled)."""

    model_config = FROZEN

    ending: RunEnding
    known: bool = True
    detail: str = ""
    kept_job_ids: list[str] = Field(default_factory=list)  # left running on purpose by the run
    reconciled_job_ids: list[str] = Field(default_factory=list)  # cancelled and verified before
    ledger_read: bool = False  # with verify_jobs: the run's ledger was read
    live_jobs: list[str] = Field(default_factory=list)  # with verify_jobs: jobs not verified ended

    def jobs_ended(self) -> bool:
        """Every job the closed run launched is verified ended (by its ledger, read just now)."""
        return self.known and self.ending is not RunEnding.OPEN and self.ledger_read and not self.live_jobs


class RecordReconciledInput(BaseModel):
    """Write reconciled jobs into their run's ledger (and its status when it still says running)."""

    model_config = FROZEN

    run_id: RunId
    ledger_uri: str
    workflow: str = ""
    ending: RunEnding
    jobs: list[ReconciledJob] = Field(default_factory=list)
    #: Jobs that ended on their own (closing a ledger the run left open); not cancelled.
    ended: list[EndedJob] = Field(default_factory=list)
    close: bool = False  # also close attempts that never got a job, and the run's status
