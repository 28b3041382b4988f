"""`npaflow deployment promote|status`: move new runs to a build only after its replay check.

Runs are pinned: promoting changes where *new* runs go; open runs finish on
the build that started them, so no run is replayed on code that cannot
reproduce it, no wave launches twice and no job is orphaned. An old build's
workers can stop once `deployment status` shows it drained (no open runs).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta

from temporalio.api.deployment.v1 import WorkerDeploymentVersion
from temporalio.api.enums.v1 import TaskQueueType, WorkerDeploymentVersionStatus
from temporalio.api.workflowservice.v1 import (
    DescribeWorkerDeploymentVersionRequest,
)
from temporalio.client import Client, WorkflowHistory
from temporalio.common import VersioningBehavior

from npaflow.errors import UsageError
from npaflow.runtime.contract import WORKFLOW_TYPE
from npaflow.temporal.deployments import current_build, describe
from worker.deployment import (
    Deployment,
    build_is_polled,
    set_current,
    set_ramping,
)
from worker.replay import ReplayReport, histories_from, replay

#: Closed runs this recent are replayed too: they are the freshest evidence of the command sequence.
RECENT = timedelta(days=1)


@dataclass
class VersionView:
    """One build of the deployment, as `deployment status` prints it."""

    build_id: str
    status: str  # current | ramping | draining | drained | inactive (npaflow: drained = no open runs)
    open_runs: int
    polling: bool
    server_status: str  # what the server says (its drainage check runs every few minutes)


def recent_query(deployment: Deployment, build_id: str, now: datetime) -> str:
    """Runs of `build_id` itself that closed within RECENT (a ramp, an earlier promote)."""
    since = (now - RECENT).strftime("%Y-%m-%dT%H:%M:%SZ")
    return (
        f"WorkflowType = '{WORKFLOW_TYPE}' AND TemporalWorkerDeploymentVersion = "
        f"'{deployment.name}:{build_id}' AND CloseTime > '{since}'"
    )


async def histories_that_would_move(
    client: Client, deployment_name: str, build_id: str, limit: int, pinned: list[str]
) -> AsyncIterator[WorkflowHistory]:
    """Open runs on the deployment's queues whose next tasks the new build would serve.

    Those are unversioned runs (from before versioning) and auto-upgrade runs.

    Runs pinned to another build stay there: they are listed in `pinned`, not replayed.
    """
    described = await describe(client, deployment_name)
    builds = (
        [v.deployment_version.build_id for v in described.worker_deployment_info.version_summaries]
        if described
        else []
    )
    queues = sorted({q for build in builds for q in await workflow_queues(client, deployment_name, build)})
    if not queues:
        return
    query = f"WorkflowType = '{WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'"
    seen = 0
    async for execution in client.list_workflows(query):
        if execution.task_queue not in queues:
            continue  # another deployment's or an unversioned queue's run: never served here
        seen += 1
        if seen > limit:
            break
        handle = client.get_workflow_handle(execution.id, run_id=execution.run_id)
        info = (await handle.describe()).raw_description.workflow_execution_info.versioning_info
        version = info.deployment_version.build_id
        if info.behavior == VersioningBehavior.PINNED.value and version and version != build_id:
            pinned.append(f"{execution.id} ({version})")
            continue
        yield await handle.fetch_history()


async def promote(
    client: Client, deployment: Deployment, build_id: str, *, ramp: float | None, limit: int
) -> tuple[ReplayReport, list[str]]:
    """Replay on this code what it would serve, then make `build_id` current (or ramp it).

    What it would serve: open runs that are not pinned to another build (runs from
    before versioning, auto-upgrade runs) and its own recently closed runs. Runs
    pinned to an older build finish there; they are returned, to watch them drain.

    Raises:
        UsageError: this code is another build, or some history does not replay (nothing changes).
    """
    if build_id != deployment.build_id:
        raise UsageError(
            f"this code is build {deployment.build_id}: run `deployment promote` with the code of "
            f"{build_id} (or set NPAFLOW_BUILD_ID={build_id} if that is this code), so the replay "
            "check runs on the code that would take the runs"
        )
    pinned: list[str] = []
    report = await replay(histories_that_would_move(client, deployment.name, build_id, limit, pinned))
    recent = await replay(
        histories_from(client, recent_query(deployment, build_id, datetime.now(UTC)), limit)
    )
    report.replayed += recent.replayed
    report.failures.update(recent.failures)
    if report.failures:
        raise UsageError(
            f"not promoting {build_id}: {len(report.failures)} of {report.replayed} histories it would "
            "serve do not replay on this code (those runs would fail on it):\n"
            + "\n".join(report.lines()[1:])
        )
    if ramp is not None:
        await set_ramping(client, deployment.name, build_id, ramp)
    else:
        described = await describe(client, deployment.name)
        summaries = described.worker_deployment_info.version_summaries if described else []
        if described is None or not any(s.deployment_version.build_id == build_id for s in summaries):
            raise UsageError(f"no worker of build {build_id} has polled yet: start its workers first")
        await set_current(client, deployment.name, build_id, described.conflict_token)
    return report, pinned


async def versions(client: Client, name: str) -> list[VersionView]:
    """Every version of the deployment with its status, open runs and whether its workers poll."""
    described = await describe(client, name)
    if described is None:
        return []
    info = described.worker_deployment_info
    views = []
    for summary in info.version_summaries:
        build_id = summary.deployment_version.build_id
        open_runs = await client.count_workflows(
            f"TemporalWorkerDeploymentVersion = '{name}:{build_id}' AND ExecutionStatus = 'Running'"
        )
        server_status = _status_name(summary.status)
        routed = server_status in ("current", "ramping")
        views.append(
            VersionView(
                build_id=build_id,
                status=server_status if routed else ("drained" if open_runs.count == 0 else "draining"),
                open_runs=open_runs.count,
                polling=await build_is_polled(client, name, build_id),
                server_status=server_status,
            )
        )
    current = current_build(described)
    return sorted(views, key=lambda v: (v.build_id != current, v.build_id))


def status_text(name: str, views: list[VersionView], *, as_json: bool) -> str:
    """The table (or JSON) `deployment status` prints."""
    if as_json:
        return json.dumps({"deployment": name, "versions": [asdict(v) for v in views]}, indent=2)
    if not views:
        return f"deployment {name}: no versions yet (no versioned worker has polled)"
    lines = [f"deployment {name}:"]
    for view in views:
        stop = "  (its workers can stop)" if view.status == "drained" and view.polling else ""
        lines.append(
            f"  {view.build_id}  {view.status:<9} open runs {view.open_runs:<4} "
            f"workers {'polling' if view.polling else 'gone'}{stop}"
        )
    return "\n".join(lines)


def _status_name(value: int) -> str:
    name = WorkerDeploymentVersionStatus.Name(value)  # type: ignore[arg-type]
    return name.removeprefix("WORKER_DEPLOYMENT_VERSION_STATUS_").lower()


async def workflow_queues(client: Client, name: str, build_id: str) -> list[str]:
    """The task queues whose workflow tasks this version serves (runs elsewhere never move here)."""
    version = await client.workflow_service.describe_worker_deployment_version(
        DescribeWorkerDeploymentVersionRequest(
            namespace=client.namespace,
            deployment_version=WorkerDeploymentVersion(deployment_name=name, build_id=build_id),
        )
    )
    return sorted(
        queue.name
        for queue in version.worker_deployment_version_info.task_queue_infos
        if queue.type == TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW
    )
