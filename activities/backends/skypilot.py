"""The SkyPilot backend: managed jobs through the SDK of one SkyPilot API server.

Rows are matched by `job_id` and `task_id`, never by name (SkyPilot renames a
single task to its job). Failures are classified from structured evidence: the
SDK exception's class, the row's status, and the exception class SkyPilot puts
at the front of `failure_reason` (skypilot ref §4, §9).
"""

from __future__ import annotations

from typing import Any

import structlog

from activities.backends.base import JobMatch, LaunchRequest, Submission
from activities.backends.job_owner import owner_of, with_owner
from activities.backends.skypilot_errors import classify_sdk_error, clean
from activities.backends.skypilot_sdk import SkyPilotApi
from activities.clock import utc_from_epoch
from npaflow.errors import (
    ControllerError,
    NpaflowError,
)
from npaflow.render import LAUNCH_TOKEN_KEY
from npaflow.runtime.ledger import TaskRow
from npaflow.runtime.messages import JobRef
from npaflow.runtime.reconcile.models import LiveJob
from npaflow.runtime.request import BackendName
from npaflow.runtime.status import JobStatus, aggregate_job_status

log = structlog.get_logger(__name__)

#: The queue fields the backend reads: asking for only these keeps each call small.
QUEUE_FIELDS = [
    "job_id",
    "task_id",
    "job_name",
    "task_name",
    "status",
    "schedule_state",
    "submitted_at",
    "start_at",
    "end_at",
    "failure_reason",
    "details",
    "metadata",
    "recovery_count",
    "current_cluster_name",
    "execution",
]
#: What the reconciler's sweep reads of every live job: who launched it, and where it stands.
LIVE_FIELDS = ["job_id", "task_id", "job_name", "status", "metadata"]
#: Seconds between the shared queue calls of one worker: one queue_v2(job_ids=...) costs about
#: 2.5 s on an API server whatever the ids (skypilot-live), so a job's end is seen within about
#: 7.5 s, and half that on average, at one call per tick however many waves await.
SKYPILOT_POLL_SECONDS = 5.0
#: Newest jobs scanned when a launch must be found by name (its request id was lost).
NAME_LOOKUP_LIMIT = 1000


def _iso(epoch: Any) -> str:
    if not isinstance(epoch, int | float) or epoch <= 0:
        return ""
    return utc_from_epoch(float(epoch))


def task_row(record: Any) -> TaskRow:
    """One `ManagedJobRecord` as a ledger timeline row (reads only QUEUE_FIELDS)."""
    status = JobStatus.parse(getattr(record.status, "value", record.status))
    return TaskRow(
        job_id=str(record.job_id),
        task_id=int(record.task_id or 0),
        task_name=str(record.task_name or ""),
        status=status,
        submitted_at=_iso(record.submitted_at),
        start_at=_iso(record.start_at),
        end_at=_iso(record.end_at),
        is_job_group=record.execution == "parallel",
        execution=str(record.execution or ""),
        cluster_name=str(record.current_cluster_name or ""),
        retry_count=int(record.recovery_count or 0),
        failure_reason=clean(record.failure_reason),
        recovery_reason=recovery_reason(status, record.details),
    )


#: How a 0.14+ server's `details` names why a RECOVERING job recovers (skypilot PR #9868).
_RECOVERING_PREFIX = "Recovering: "


def recovery_reason(status: JobStatus, details: str | None) -> str:
    """Why SkyPilot is recovering the task (a preemption, an OOM-killed pod), where the server says.

    0.14 servers put the recovery's cause in `details` while a task is RECOVERING; older
    ones say nothing there, and the row then has no reason (never a guessed one).
    """
    text = clean(details)
    if status is not JobStatus.RECOVERING or not text.startswith(_RECOVERING_PREFIX):
        return ""
    return text.removeprefix(_RECOVERING_PREFIX)


class SkyPilotBackend:
    """Launches, queries and cancels SkyPilot managed jobs through the SDK."""

    name = BackendName.SKYPILOT
    host_bound = False

    def __init__(self, api: SkyPilotApi, *, poll_interval: float = SKYPILOT_POLL_SECONDS) -> None:
        self.api = api
        self.poll_interval = poll_interval

    async def _call(self, what: str, coroutine: Any) -> Any:
        try:
            return await coroutine
        except NpaflowError:
            raise
        except Exception as exc:
            raise classify_sdk_error(exc, what) from exc

    async def submit(self, request: LaunchRequest) -> Submission:
        """POST the launch; the request id comes back before the launch is awaited."""
        secrets = {
            name: request.secret_values[name]
            for name in request.secret_names
            if name in request.secret_values
        }
        request_id = await self._call(
            f"launch {request.job_name}",
            self.api.launch(with_owner(request.yaml, request.owner), request.job_name, secrets),
        )
        log.info("skypilot.submitted", job_name=request.job_name, request_id=request_id)
        return Submission(request_id=request_id)

    async def resolve(self, request_id: str) -> str:
        """Wait for the launch request; its value is `(job_ids, handle)`."""
        value = await self._call(f"launch request {request_id}", self.api.get(request_id))
        job_ids = value[0] if isinstance(value, tuple | list) and value else value
        if isinstance(job_ids, int):
            job_ids = [job_ids]
        if not job_ids:
            raise ControllerError(f"launch request {request_id} finished without a job id")
        if len(job_ids) > 1:
            raise ControllerError(f"launch request {request_id} created jobs {job_ids}; one expected")
        return str(job_ids[0])

    async def find_jobs(self, job_name: str) -> list[JobMatch]:
        """Jobs named exactly `job_name` among the newest NAME_LOOKUP_LIMIT, newest first."""
        records = await self._call(
            f"look up {job_name}", self.api.queue(job_ids=None, limit=NAME_LOOKUP_LIMIT, fields=QUEUE_FIELDS)
        )
        rows_by_job: dict[int, list[Any]] = {}
        for record in records:
            if record.job_name == job_name:
                rows_by_job.setdefault(int(record.job_id), []).append(record)
        matches = []
        for job_id in sorted(rows_by_job, reverse=True):
            rows = rows_by_job[job_id]
            status = aggregate_job_status([task_row(r).status for r in rows])
            stuck = status is JobStatus.PENDING and all(r.schedule_state == "INACTIVE" for r in rows)
            token = str((rows[0].metadata or {}).get(LAUNCH_TOKEN_KEY, ""))
            reason = "PENDING/INACTIVE: left by a failed launch request" if stuck else ""
            matches.append(
                JobMatch(
                    job_id=str(job_id),
                    status=status,
                    launch_token=token,
                    can_progress=not stuck,
                    reason=reason,
                )
            )
        return matches

    async def queue(self, job_ids: list[str]) -> dict[str, list[TaskRow]]:
        """Task rows of each job id from one call (no rows for an id the server lacks)."""
        result: dict[str, list[TaskRow]] = {job_id: [] for job_id in job_ids}
        if not job_ids:
            return result
        records = await self._call(
            "queue", self.api.queue(job_ids=[int(i) for i in job_ids], limit=None, fields=QUEUE_FIELDS)
        )
        for record in records:
            job_id = str(record.job_id)
            if job_id in result:
                result[job_id].append(task_row(record))
        for rows in result.values():
            rows.sort(key=lambda row: row.task_id)
        return result

    async def cancel(self, job_id: str) -> None:
        """Cancel exactly this job id (SkyPilot skips unknown and terminal jobs)."""
        await self._call(f"cancel job {job_id}", self.api.cancel([int(job_id)]))

    async def live_jobs(self) -> list[LiveJob]:
        """Every managed job not yet terminal, of all users (one `queue_v2(skip_finished=True)`)."""
        records = await self._call("list live jobs", self.api.live_jobs(fields=LIVE_FIELDS))
        rows_by_job: dict[int, list[Any]] = {}
        for record in records:
            rows_by_job.setdefault(int(record.job_id), []).append(record)
        live = []
        for job_id, rows in sorted(rows_by_job.items()):
            status = aggregate_job_status(
                [JobStatus.parse(getattr(r.status, "value", r.status)) for r in rows]
            )
            if status.is_terminal():
                continue
            job = JobRef(backend=self.name, job_id=str(job_id), job_name=str(rows[0].job_name or ""))
            live.append(LiveJob(job=job, status=status, owner=owner_of(rows[0].metadata)))
        return live

    async def logs(self, job_id: str, task: str = "", tail_lines: int = 2000) -> str:
        """The last lines of the job's logs, colour codes removed."""
        return clean(await self._call(f"logs of job {job_id}", self.api.logs(int(job_id), tail_lines)))
