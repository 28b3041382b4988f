"""A fake SkyPilot API server at the SDK boundary, built from SkyPilot's own models.

It implements `SkyPilotApi` with `ManagedJobRecord` rows (filled the way the
real server fills them for the fields asked for, see
tests/fixtures/skypilot/), `ManagedJobStatus` values, SkyPilot's own loaders
and exception classes, so the real backend, activities and workflow run
against it for the paths a cloud-less server cannot reach: RUNNING and
SUCCEEDED, JobGroups, capacity, a lost controller, transient API errors.
"""

from __future__ import annotations

import asyncio
import itertools
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import sky
from packaging.version import Version
from sky import exceptions as sky_exceptions
from sky.jobs.state import ManagedJobStatus
from sky.schemas.api.responses import ManagedJobRecord
from sky.server.constants import API_VERSION
from sky.utils import dag_utils

from activities.backends.skypilot_versions import ServerState, SkyPilotVersions

S = ManagedJobStatus
#: Fields the real server fills whatever was asked for: 0.12 fills is_job_group and priority,
#: 0.14 only what was asked (tests/fixtures/skypilot/queue_v2_failed_prechecks-<release>.json).
ALWAYS_FILLED = {"is_job_group", "priority"} if Version(sky.__version__) < Version("0.14") else set()
#: 0.14 servers name a recovery's cause in `details` (skypilot PR #9868); 0.12 servers do not.
RECOVERY_DETAILS = Version(sky.__version__) >= Version("0.14")


@dataclass
class FakeJob:
    """One managed job: its tasks, and a status script advanced by every queue call."""

    job_id: int
    name: str
    execution: str
    tasks: list[str]
    metadata: dict[str, Any]
    script: list[list[ManagedJobStatus]]
    schedule_state: str = "INACTIVE"
    statuses: list[ManagedJobStatus] = field(default_factory=list)
    submitted_at: float | None = None
    start_at: list[float | None] = field(default_factory=list)
    end_at: list[float | None] = field(default_factory=list)
    failure_reason: str | None = None
    recovery_reason: str | None = None  # what a 0.14+ server says while it recovers the job
    lost: bool = False  # the controller lost the record: the queue no longer lists it

    def advance(self) -> None:
        """Move one step along the script (the last step repeats)."""
        step = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        self.set_statuses(step)

    def set_statuses(self, step: list[ManagedJobStatus]) -> None:
        now = time.time()
        for index, status in enumerate(step):
            if status is not S.PENDING and self.submitted_at is None:
                self.submitted_at = now
            if status is S.RUNNING and self.start_at[index] is None:
                self.start_at[index] = now
            if (
                status.is_terminal()
                and self.end_at[index] is None
                and not (status is S.CANCELLED and self.statuses[index] is S.PENDING)
            ):
                self.end_at[index] = now
        self.statuses = list(step)
        self.schedule_state = "DONE" if all(s.is_terminal() for s in step) else "ALIVE"

    def details(self, index: int) -> str | None:
        """The `details` column as the server formats it (sky/jobs/utils.py `_format_job_details`)."""
        status = self.statuses[index]
        if status.is_failed() and self.failure_reason:
            return f"Failure: {self.failure_reason}"
        if status is S.RECOVERING and self.recovery_reason and RECOVERY_DETAILS:
            return f"Recovering: {self.recovery_reason}"
        return None

    def record(self, index: int, fields: list[str]) -> ManagedJobRecord:
        values = {
            "job_id": self.job_id,
            "task_id": index,
            "job_name": self.name,
            "task_name": self.name if len(self.tasks) == 1 else self.tasks[index],
            "status": self.statuses[index],
            "schedule_state": self.schedule_state,
            "submitted_at": self.submitted_at,
            "start_at": self.start_at[index],
            "end_at": self.end_at[index],
            "recovery_count": 0,
            "failure_reason": self.failure_reason if self.statuses[index].is_failed() else None,
            "details": self.details(index),
            "metadata": dict(self.metadata),
            "current_cluster_name": None,
            "execution": self.execution,
            "is_job_group": self.execution == "parallel",
            "priority": 0,
        }
        return ManagedJobRecord(**{k: v for k, v in values.items() if k in fields or k in ALWAYS_FILLED})


def statuses(*names: str) -> list[ManagedJobStatus]:
    """One script step: a status per task (a single name applies to every task)."""
    return [ManagedJobStatus(name) for name in names]


@dataclass
class FakeSkyPilotApi:
    """Scripted managed jobs; every call recorded. Scripts are per launch, in launch order."""

    scripts: list[list[list[ManagedJobStatus]]] = field(default_factory=list)
    default: list[list[ManagedJobStatus]] = field(default_factory=lambda: [statuses("SUCCEEDED")])
    failure_reasons: dict[int, str] = field(default_factory=dict)  # launch number -> reason
    recovery_reasons: dict[int, str] = field(default_factory=dict)  # launch number -> recovery cause
    launch_errors: dict[int, Exception] = field(default_factory=dict)  # launch number -> get() raises
    unreachable_calls: int = 0  # the next N calls raise ApiServerConnectionError
    cancels_ignored: int = 0  # the next N cancels are accepted and never acted on (a stuck controller)
    queue_latency: float = 0.0  # seconds every queue call takes (the real one: 2-20 s)
    missing_answers: dict[int, int] = field(default_factory=dict)  # job id -> answers that omit it
    jobs: dict[int, FakeJob] = field(default_factory=dict)
    requests: dict[str, int] = field(default_factory=dict)
    launched: list[tuple[str, Mapping[str, str]]] = field(default_factory=list)
    yamls: list[str] = field(default_factory=list)  # the YAML of each launch, as the backend sent it
    queue_calls: list[list[int] | None] = field(default_factory=list)
    cancel_calls: list[list[int]] = field(default_factory=list)
    live_calls: int = 0
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1))

    def _reachable(self) -> None:
        if self.unreachable_calls > 0:
            self.unreachable_calls -= 1
            raise sky_exceptions.ApiServerConnectionError("http://fake-skypilot:46580")

    async def launch(self, yaml_text: str, name: str, secrets: Mapping[str, str]) -> str:
        self._reachable()
        dag = dag_utils.load_dag_from_yaml_str(yaml_text)  # SkyPilot's own loader validates it
        job_id = next(self._ids)
        tasks = [task.name or name for task in dag.tasks]
        metadata = dict(getattr(dag.tasks[0], "_metadata", None) or {})
        script = [
            list(step) * (len(tasks) if len(step) == 1 else 1)
            for step in (self.scripts[job_id - 1] if job_id <= len(self.scripts) else self.default)
        ]
        job = FakeJob(
            job_id=job_id,
            name=name,
            execution="parallel" if dag.is_job_group() else "serial",
            tasks=tasks,
            metadata=metadata,
            script=script,
            statuses=[S.PENDING] * len(tasks),
            start_at=[None] * len(tasks),
            end_at=[None] * len(tasks),
            failure_reason=self.failure_reasons.get(job_id),
            recovery_reason=self.recovery_reasons.get(job_id),
        )
        self.jobs[job_id] = job
        self.launched.append((name, dict(secrets)))
        self.yamls.append(yaml_text)
        request_id = str(uuid.uuid4())
        self.requests[request_id] = job_id
        return request_id

    async def get(self, request_id: str) -> Any:
        self._reachable()
        if request_id not in self.requests:
            raise RuntimeError(f"Failed to get request {request_id}: 404 not found")
        job_id = self.requests[request_id]
        error = self.launch_errors.get(job_id)
        if error is not None:
            raise error
        self.jobs[job_id].schedule_state = "WAITING"
        return [job_id], None

    async def queue(
        self, *, job_ids: list[int] | None, limit: int | None, fields: list[str]
    ) -> list[ManagedJobRecord]:
        self._reachable()
        self.queue_calls.append(list(job_ids) if job_ids is not None else None)
        if self.queue_latency:
            await asyncio.sleep(self.queue_latency)
        omitted = {job_id for job_id, left in self.missing_answers.items() if left > 0}
        for job_id in omitted:
            self.missing_answers[job_id] -= 1
        listed = (  # asked ids are looked up, as the server's `job_id IN (...)` query does
            self.jobs.items()
            if job_ids is None
            else ((i, self.jobs[i]) for i in set(job_ids) if i in self.jobs)
        )
        chosen = [
            job for job_id, job in sorted(listed, reverse=True) if not job.lost and job_id not in omitted
        ][:limit]
        for job in chosen:
            if job.schedule_state != "INACTIVE" and job_ids is not None:
                job.advance()
        return [job.record(index, fields) for job in chosen for index in range(len(job.tasks))]

    async def live_jobs(self, *, fields: list[str]) -> list[ManagedJobRecord]:
        self._reachable()
        self.live_calls += 1
        chosen = [
            job
            for _, job in sorted(self.jobs.items(), reverse=True)
            if not job.lost and not all(s.is_terminal() for s in job.statuses)
        ]
        return [job.record(index, fields) for job in chosen for index in range(len(job.tasks))]

    async def cancel(self, job_ids: list[int]) -> None:
        self._reachable()
        self.cancel_calls.append(list(job_ids))
        if self.cancels_ignored > 0:
            self.cancels_ignored -= 1
            return
        for job_id in job_ids:
            job = self.jobs.get(job_id)
            if job is not None and not all(s.is_terminal() for s in job.statuses):
                step = [s if s.is_terminal() else S.CANCELLED for s in job.statuses]
                job.script = [step]
                job.set_statuses(step)

    async def logs(self, job_id: int, tail: int) -> str:
        self._reachable()
        return f"\x1b[1mlogs of managed job {job_id}\x1b[0m"

    async def versions(self) -> SkyPilotVersions:
        """A server of the SDK's own release, reachable unless calls are set to fail."""
        client = SkyPilotVersions(
            endpoint="http://fake-skypilot:46580",
            client_version=sky.__version__,
            client_api_version=API_VERSION,
            server_state=ServerState.HEALTHY,
        )
        if self.unreachable_calls > 0:
            return client.model_copy(update={"server_state": ServerState.UNHEALTHY})
        return client.model_copy(
            update={"server_version": sky.__version__, "server_api_version": API_VERSION}
        )

    def names(self) -> list[str]:
        """The job name of every launch, in order."""
        return [job.name for _, job in sorted(self.jobs.items())]
