"""The backend interface: launch, look up by name, query by ids, cancel by id, logs."""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from npaflow.runtime.ledger import TaskRow


class BackendUnavailableError(Exception):
    """A query could not be answered (transport, controller down); the job may still run."""


class LaunchRejectedError(Exception):
    """The backend refused the launch; `retryable` says whether trying again can help."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


class LaunchRequest(BaseModel):
    """One launch: the rendered YAML, its unique name, and secret values (never persisted)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    job_name: str
    launch_token: str
    yaml: str
    infra: str = ""
    secret_names: list[str] = Field(default_factory=list)
    secret_values: dict[str, str] = Field(default_factory=dict, repr=False, exclude=True)


class Backend(Protocol):
    """Runs wave jobs; every operation after launch names jobs by exact id."""

    async def launch(self, request: LaunchRequest) -> str:
        """Launch the job and return its id (as reported by the backend, may be '')."""
        ...

    async def find_jobs(self, job_name: str) -> list[str]:
        """Return the ids of jobs with exactly this name, newest first."""
        ...

    async def queue(self, job_ids: list[str]) -> dict[str, list[TaskRow]]:
        """Return task rows per job id; a missing id maps to no rows (absent)."""
        ...

    async def cancel(self, job_id: str) -> None:
        """Ask the backend to cancel one job by id (idempotent)."""
        ...

    async def logs(self, job_id: str, task: str = "") -> str:
        """Return the job's logs (one task's, when named)."""
        ...
