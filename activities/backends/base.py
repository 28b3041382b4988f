"""The backend interface: submit, resolve, look up by name, query by ids, cancel by id, logs.

Backends raise npaflow's error classes (npaflow/errors.py): `TransportError` when
they cannot be reached, `ConfigurationError` for launches that can never work,
`CapacityError` and `ControllerError` for failures outside the job.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, Field

from npaflow.errors import ControllerError
from npaflow.presets import FROZEN
from npaflow.runtime.ledger import TaskRow
from npaflow.runtime.reconcile.models import JobOwner, LiveJob
from npaflow.runtime.request import BackendName
from npaflow.runtime.status import JobStatus


class RequestUnknownError(ControllerError):
    """The backend no longer knows a launch request id (e.g. past its retention)."""


class LaunchRequest(BaseModel):
    """One launch: the rendered YAML, its unique name, and secret values (never persisted)."""

    model_config = FROZEN

    job_name: str
    launch_token: str
    yaml: str
    infra: str = ""
    secret_names: list[str] = Field(default_factory=list)
    secret_values: dict[str, str] = Field(default_factory=dict, repr=False, exclude=True)
    owner: JobOwner | None = None  # stored with the job: the reconciler finds its run by it


class Submission(BaseModel):
    """What a backend returns once it accepted a launch: a request id, maybe the job id already."""

    model_config = FROZEN

    request_id: str
    job_id: str = ""


class JobMatch(BaseModel):
    """A job found under an exact name: can it be adopted?"""

    model_config = FROZEN

    job_id: str
    status: JobStatus
    launch_token: str = ""
    can_progress: bool = True  # False: e.g. PENDING/INACTIVE after a failed launch request
    reason: str = ""  # why it cannot progress


class Backend(Protocol):
    """Runs wave jobs; every operation after launch names jobs by exact id."""

    name: BackendName
    #: True when jobs live on the launching worker's host (their activities must run there).
    host_bound: bool
    #: Seconds between polls of one job (a cap below `--poll-seconds`): what a queue call
    #: costs decides it; the poller coalesces every await of a worker onto one call per tick.
    poll_interval: float

    async def submit(self, request: LaunchRequest) -> Submission:
        """Send the launch and return as soon as the backend accepted it."""
        ...

    async def resolve(self, request_id: str) -> str:
        """Wait for a launch request to finish and return its job id (raises the launch's error)."""
        ...

    async def find_jobs(self, job_name: str) -> list[JobMatch]:
        """Return the jobs with exactly this name, newest first."""
        ...

    async def queue(self, job_ids: list[str]) -> dict[str, list[TaskRow]]:
        """Return task rows per job id, sorted by task id; an unknown id maps to no rows."""
        ...

    async def cancel(self, job_id: str) -> None:
        """Ask the backend to cancel one job by id (idempotent; terminal jobs are left alone)."""
        ...

    async def logs(self, job_id: str, task: str = "", tail_lines: int = 2000) -> str:
        """Return the end of the job's logs (one task's, when named)."""
        ...

    async def live_jobs(self) -> list[LiveJob]:
        """Every job this backend (for a local one: this host) holds that is not terminal."""
        ...
