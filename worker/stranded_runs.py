"""`npaflow dev` names the open runs that wait for an earlier build no worker serves.

In dev every code edit is a new build, and a run stays pinned to the build that
started it: a run left open when `npaflow dev` restarted on edited code (or on an
upgraded npaflow) waits for a worker of its build that may never come, and nothing
fails. The dev worker says so once at start, naming each build and its runs;
`npaflow status` says it per run (npaflow/temporal/serving.py).
"""

from __future__ import annotations

import structlog
from temporalio.client import Client
from temporalio.service import RPCError

from npaflow.runtime.contract import WORKFLOW_TYPE
from npaflow.temporal.serving import Build, pinned_version, unserved_reason
from worker.deployment import Deployment

log = structlog.get_logger(__name__)

#: How many open runs the start looks at (a dev server holds a few).
RUNS_LOOKED_AT = 500
#: How many run ids the warning names per build.
RUNS_NAMED = 5


async def stranded_runs(client: Client, deployment: Deployment, task_queue: str) -> dict[Build, list[str]]:
    """Open runs on `task_queue` pinned to another build of `deployment` that no live worker polls."""
    query = (
        f"WorkflowType = '{WORKFLOW_TYPE}' AND ExecutionStatus = 'Running' AND TaskQueue = '{task_queue}' "
        f"AND TemporalWorkerDeployment = '{deployment.name}' "
        f"AND TemporalWorkerDeploymentVersion != '{deployment.version}'"
    )
    by_build: dict[Build, list[str]] = {}
    async for execution in client.list_workflows(query, limit=RUNS_LOOKED_AT):
        version = pinned_version(execution)
        build_id = version.removeprefix(f"{deployment.name}:")
        if build_id and build_id != version:
            by_build.setdefault(Build(deployment.name, build_id), []).append(execution.id)
    return {
        build: runs for build, runs in by_build.items() if await unserved_reason(client, task_queue, build)
    }


async def warn_of_stranded_runs(client: Client, deployment: Deployment | None, task_queue: str) -> None:
    """Log one warning per earlier build whose open runs no worker serves (never fails the start)."""
    if deployment is None:
        return
    try:
        stranded = await stranded_runs(client, deployment, task_queue)
    except RPCError as exc:
        log.warning("dev.stranded_runs_unknown", error=exc.message[:200])
        return
    for build, runs in stranded.items():
        log.warning(
            "dev.runs_wait_for_a_build_no_worker_serves",
            build=str(build),
            runs=runs[:RUNS_NAMED],
            more=max(0, len(runs) - RUNS_NAMED),
            hint="each is pinned to that build (the code it started on): start a worker of it, "
            "or move the run (docs/deploy.md, Upgrades); `npaflow status RUN_ID` says the same",
        )
