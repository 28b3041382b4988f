"""A scriptable backend double: records every call and plays scripted statuses.

It implements the Backend protocol, so the real workflow, executor and
activities run against it unchanged (STYLE rule 23).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

import yaml

from activities.backends.base import JobMatch, LaunchRequest, Submission
from npaflow.errors import NpaflowError, TransportError
from npaflow.runtime.ledger import TaskRow
from npaflow.runtime.messages import JobRef
from npaflow.runtime.reconcile.models import JobOwner, LiveJob
from npaflow.runtime.request import BackendName
from npaflow.runtime.status import JobStatus, aggregate_job_status


@dataclass
class Launch:
    """One recorded launch."""

    job_id: str
    job_name: str
    token: str
    header: dict
    tasks: list[dict]
    secret_names: list[str]
    owner: JobOwner | None = None

    @property
    def task_names(self) -> list[str]:
        return [t["name"] for t in self.tasks]

    @property
    def states(self) -> list[str]:
        return [t["envs"]["NPA_WORKFLOW_STATE"] for t in self.tasks]

    def env(self, key: str) -> str:
        return self.tasks[0]["envs"][key]


@dataclass
class FakeBackend:
    """Scripted statuses per launch, in launch order; default SUCCEEDED at once."""

    name: BackendName = BackendName.LOCAL
    host_bound: bool = False
    poll_interval: float = 0.05
    scripts: list[list[str]] = field(default_factory=list)
    default: list[str] = field(default_factory=lambda: ["SUCCEEDED"])
    launch_delay: float = 0.0
    resolve_delay: float = 0.0
    query_failures: int = 0
    resolve_errors: dict[int, NpaflowError] = field(default_factory=dict)  # launch number -> error
    on_launch: Callable[[Launch], None] | None = None
    launches: list[Launch] = field(default_factory=list)
    cancel_calls: list[str] = field(default_factory=list)
    queue_calls: list[list[str]] = field(default_factory=list)
    resolve_calls: list[str] = field(default_factory=list)
    stuck: set[str] = field(default_factory=set)  # job ids that can never progress
    submits_started: int = 0
    _statuses: dict[str, list[str]] = field(default_factory=dict)

    async def submit(self, request: LaunchRequest) -> Submission:
        self.submits_started += 1
        if self.launch_delay:
            await asyncio.sleep(self.launch_delay)
        documents = [d for d in yaml.safe_load_all(request.yaml) if d]
        job_id = str(len(self.launches) + 1)
        launch = Launch(
            job_id,
            request.job_name,
            request.launch_token,
            documents[0],
            documents[1:],
            request.secret_names,
            request.owner,
        )
        self.launches.append(launch)
        script = (
            self.scripts[len(self.launches) - 1] if len(self.launches) <= len(self.scripts) else self.default
        )
        self._statuses[job_id] = list(script)
        if self.on_launch:
            self.on_launch(launch)
        return Submission(request_id=f"req-{job_id}")

    async def resolve(self, request_id: str) -> str:
        self.resolve_calls.append(request_id)
        if self.resolve_delay:
            await asyncio.sleep(self.resolve_delay)
        job_id = request_id.removeprefix("req-")
        error = self.resolve_errors.get(int(job_id))
        if error is not None:
            raise error
        return job_id

    async def find_jobs(self, job_name: str) -> list[JobMatch]:
        matches = []
        for launch in reversed(self.launches):
            if launch.job_name == job_name:
                status = self._peek(launch.job_id)
                matches.append(
                    JobMatch(
                        job_id=launch.job_id,
                        status=status,
                        launch_token=launch.token,
                        can_progress=launch.job_id not in self.stuck,
                    )
                )
        return matches

    def _peek(self, job_id: str) -> JobStatus:
        return JobStatus.parse(self._statuses[job_id][0])

    async def queue(self, job_ids: list[str]) -> dict[str, list[TaskRow]]:
        self.queue_calls.append(list(job_ids))
        if self.query_failures > 0:
            self.query_failures -= 1
            raise TransportError("TimeoutError: queue timed out")
        result = {}
        for job_id in job_ids:
            script = self._statuses.get(job_id)
            if script is None:
                result[job_id] = []
                continue
            status = JobStatus.parse(script.pop(0) if len(script) > 1 else script[0])
            launch = self.launches[int(job_id) - 1]
            result[job_id] = [
                TaskRow(job_id=job_id, task_id=i, task_name=name, status=status)
                for i, name in enumerate(launch.task_names)
            ]
        return result

    async def cancel(self, job_id: str) -> None:
        self.cancel_calls.append(job_id)
        if job_id in self._statuses and not self._peek(job_id).is_terminal():
            self._statuses[job_id] = ["CANCELLED"]

    async def logs(self, job_id: str, task: str = "", tail_lines: int = 2000) -> str:
        return f"logs of {job_id}"

    async def live_jobs(self) -> list[LiveJob]:
        live = []
        for launch in self.launches:
            status = self._peek(launch.job_id)
            if not status.is_terminal():
                job = JobRef(backend=self.name, job_id=launch.job_id, job_name=launch.job_name)
                live.append(LiveJob(job=job, status=status, owner=launch.owner))
        return live

    @property
    def submissions(self) -> list[list[str]]:
        return [launch.states for launch in self.launches]

    def job_status(self, job_id: str) -> JobStatus:
        """What the job's rows would aggregate to now (without advancing its script)."""
        return aggregate_job_status([self._peek(job_id)])

    @property
    def queried_ids(self) -> list[str]:
        return [job_id for call in self.queue_calls for job_id in call]
