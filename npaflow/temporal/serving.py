"""Whether a worker that can move a run polls its task queue, and what to say when none does.

A pinned run's tasks go only to workers of the build that started it. When the
queue is polled by other builds alone (that build's workers were stopped before
its runs drained, or `npaflow dev` restarted on edited code), the run waits and
nothing anywhere fails: `status`, `--watch`, `cancel` and the run page say so,
naming the build, instead of showing a quiet "running".
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from temporalio.api.enums.v1 import TaskQueueType, VersioningBehavior
from temporalio.api.taskqueue.v1 import PollerInfo, TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client, WorkflowExecution, WorkflowExecutionDescription
from temporalio.service import RPCError

from npaflow.temporal.deployments import current_build, describe

#: A poller seen this recently is a live worker: workers long-poll for at most a minute, and
#: the server lists a killed one for 5 minutes more.
LIVE_POLLER_SECONDS = 90


@dataclass(frozen=True)
class Build:
    """A Worker Deployment version: the deployment's name and the build id."""

    deployment: str
    build_id: str

    def __str__(self) -> str:
        return f"{self.deployment}:{self.build_id}"


def pinned_build(description: WorkflowExecutionDescription) -> Build | None:
    """The build whose workers alone take the run's tasks (None: any worker of the queue may)."""
    info = description.raw_description.workflow_execution_info.versioning_info
    override = info.versioning_override
    if override.HasField("auto_upgrade"):
        return None
    if override.HasField("pinned") and override.pinned.version.build_id:
        version = override.pinned.version
        return Build(version.deployment_name, version.build_id)
    version = info.deployment_version
    if info.behavior != VersioningBehavior.VERSIONING_BEHAVIOR_PINNED or not version.build_id:
        return None
    return Build(version.deployment_name, version.build_id)


def pinned_version(execution: WorkflowExecution) -> str:
    """A listed run's pinned `deployment:build` from its BuildIds attribute ("" when not pinned).

    What `pinned_build` reads from a describe, read from the list's own row: `npaflow list`
    learns it for every row without a call per run.
    """
    payload = execution.raw_info.search_attributes.indexed_fields.get("BuildIds")
    try:
        entries = json.loads(payload.data) if payload is not None else []
    except ValueError:
        return ""
    for entry in entries if isinstance(entries, list) else []:
        kind, _, version = str(entry).partition(":")
        if kind == "pinned" and version:
            return version
    return ""


async def unserved_runs(client: Client, runs: Mapping[str, tuple[str, str]]) -> dict[str, str]:
    """Why nothing moves each open run now, for the runs nothing moves (one describe per queue).

    `runs` maps a run id to its task queue and pinned version ("" when not pinned).
    """
    pollers = {queue: await live_pollers(client, queue) for queue in {queue for queue, _ in runs.values()}}
    reasons: dict[str, str] = {}
    unrouted: dict[str, str] = {}
    for run_id, (queue, version) in runs.items():
        live = pollers[queue]
        if live is None:  # the server cannot say: nothing is claimed
            continue
        if not live:
            reasons[run_id] = f"no worker polls task queue '{queue}'"
        elif version and not any(_version_of(poller) == version for poller in live):
            reasons[run_id] = f"no worker of build {version} polls task queue '{queue}'"
        elif not version:
            if queue not in unrouted:
                unrouted[queue] = await unrouted_reason(client, queue, live)
            if unrouted[queue]:
                reasons[run_id] = "no worker of the current build polls its queue (promote the new build)"
    return reasons


def _version_of(poller: PollerInfo) -> str:
    return str(Build(poller.deployment_options.deployment_name, poller.deployment_options.build_id))


def no_worker_text(queue: str) -> str:
    """What to say while no worker polls the run's task queue."""
    return (
        f"no worker polls task queue '{queue}': the run waits until one starts "
        f"(NPAFLOW_TASK_QUEUE={queue} npaflow worker, or npaflow dev for the default queue)"
    )


def no_build_worker_text(queue: str, build: Build) -> str:
    """What to say while workers poll the queue but none of the build the run is pinned to."""
    return (
        f"no worker of build {build} polls task queue '{queue}', and the run is pinned to that build: "
        "it waits until one starts (a worker of the code the run started on; `npaflow deployment "
        "status` lists the builds and their pollers)"
    )


async def unserved_reason(client: Client, queue: str, build: Build | None) -> str:
    """Why no worker can move the run now ("" when one can, or the server cannot say)."""
    pollers = await live_pollers(client, queue)
    if pollers is None:
        return ""
    if not pollers:
        return no_worker_text(queue)
    if build is None:
        return await unrouted_reason(client, queue, pollers)
    if not any(serves(poller, build) for poller in pollers):
        return no_build_worker_text(queue, build)
    return ""


async def unrouted_reason(client: Client, queue: str, pollers: list[PollerInfo]) -> str:
    """A run not yet pinned starts on its deployment's current version: say when none of its workers poll.

    Workers restarted on new code join as a new build that takes new runs only once
    promoted; until then a new run waits for the old build's workers. "" when a worker
    of the current version polls, the pollers are unversioned, or the server cannot say.
    """
    names = {poller.deployment_options.deployment_name for poller in pollers}
    if len(names) != 1 or "" in names:
        return ""
    (name,) = names
    try:
        current = current_build(await describe(client, name))
    except RPCError:
        return ""
    if not current or any(serves(poller, Build(name, current)) for poller in pollers):
        return ""
    builds = sorted({poller.deployment_options.build_id for poller in pollers})
    return (
        f"new runs on task queue '{queue}' start on build {Build(name, current)}, the deployment's "
        f"current version, and no worker of it polls; workers of build {', '.join(builds)} do: promote "
        f"one (`npaflow deployment promote {builds[-1]}`, run with that build's code) or start a worker "
        "of the current build"
    )


def serves(poller: PollerInfo, build: Build) -> bool:
    """True when the poller is a worker of `build`."""
    options = poller.deployment_options
    return options.build_id == build.build_id and options.deployment_name == build.deployment


async def live_pollers(client: Client, queue: str, *, activities: bool = False) -> list[PollerInfo] | None:
    """The queue's live workflow (or activity) pollers; None when the server cannot say (never "none")."""
    try:
        return await queue_pollers(client, queue, activities=activities)
    except RPCError:
        return None


async def queue_pollers(client: Client, queue: str, *, activities: bool = False) -> list[PollerInfo]:
    """The queue's live workflow (or activity) pollers.

    Raises:
        RPCError: the server could not say.
    """
    kind = TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY if activities else TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW
    response = await client.workflow_service.describe_task_queue(
        DescribeTaskQueueRequest(
            namespace=client.namespace, task_queue=TaskQueue(name=queue), task_queue_type=kind
        )
    )
    recent = datetime.now(UTC) - timedelta(seconds=LIVE_POLLER_SECONDS)
    return [poller for poller in response.pollers if poller.last_access_time.ToDatetime(tzinfo=UTC) > recent]
