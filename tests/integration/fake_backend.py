"""A scriptable backend double: records every call and plays scripted statuses.

It implements the Backend protocol, so the real workflow, executor and
activities run against it unchanged (STYLE rule 23).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

import yaml

from activities.backends.base import BackendUnavailableError, LaunchRequest
from npaflow.runtime.ledger import TaskRow


@dataclass
class Launch:
    """One recorded launch."""

    job_id: str
    job_name: str
    header: dict
    tasks: list[dict]
    secret_names: list[str]

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

    scripts: list[list[str]] = field(default_factory=list)
    default: list[str] = field(default_factory=lambda: ["SUCCEEDED"])
    launch_delay: float = 0.0
    query_failures: int = 0
    query_failures_after: int = 0
    reported_ids: list[str] | None = None
    name_lookup: Callable[[str, list[str]], list[str]] | None = None
    on_launch: Callable[[Launch], None] | None = None
    launches: list[Launch] = field(default_factory=list)
    cancel_calls: list[str] = field(default_factory=list)
    queue_calls: list[str] = field(default_factory=list)
    _statuses: dict[str, list[str]] = field(default_factory=dict)
    _names: dict[str, str] = field(default_factory=dict)
    _queries: int = 0

    async def launch(self, request: LaunchRequest) -> str:
        if self.launch_delay:
            await asyncio.sleep(self.launch_delay)
        documents = [d for d in yaml.safe_load_all(request.yaml) if d]
        job_id = str(len(self.launches) + 1)
        launch = Launch(job_id, request.job_name, documents[0], documents[1:], request.secret_names)
        self.launches.append(launch)
        script = self.scripts[len(self.launches) - 1] if len(self.launches) <= len(self.scripts) \
            else self.default
        self._statuses[job_id] = list(script)
        self._names[job_id] = request.job_name
        if self.on_launch:
            self.on_launch(launch)
        if self.reported_ids is not None:
            return self.reported_ids[len(self.launches) - 1]
        return job_id

    async def find_jobs(self, job_name: str) -> list[str]:
        ids = [i for i, name in self._names.items() if name == job_name]
        ids = sorted(ids, key=int, reverse=True)
        return self.name_lookup(job_name, ids) if self.name_lookup else ids

    async def queue(self, job_ids: list[str]) -> dict[str, list[TaskRow]]:
        self._queries += 1
        self.queue_calls.extend(job_ids)
        if self._queries > self.query_failures_after and self.query_failures > 0:
            self.query_failures -= 1
            raise BackendUnavailableError("TimeoutError: queue timed out")
        result = {}
        for job_id in job_ids:
            script = self._statuses.get(job_id)
            if script is None:
                result[job_id] = []
                continue
            status = script.pop(0) if len(script) > 1 else script[0]
            launch = self.launches[int(job_id) - 1]
            result[job_id] = [TaskRow(job_id=job_id, task_id=i, task_name=name, status=status)
                              for i, name in enumerate(launch.task_names)]
        return result

    async def cancel(self, job_id: str) -> None:
        self.cancel_calls.append(job_id)
        if job_id in self._statuses:
            self._statuses[job_id] = ["CANCELLED"]

    async def logs(self, job_id: str, task: str = "") -> str:
        return f"logs of {job_id}"

    @property
    def submissions(self) -> list[list[str]]:
        return [launch.states for launch in self.launches]
