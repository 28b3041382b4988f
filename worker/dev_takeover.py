"""`npaflow dev` takes the task queue for its build, and gives it back when it leaves.

In dev every code edit is a new build, and the newest `npaflow dev` takes new runs
(`adopt_if_first(take_over=True)`). A second `npaflow dev` joining a server that
another one started would otherwise keep the queue after it exits, and every new
run would then wait for a build with no worker while the first one sat idle. So on
a graceful exit it hands the queue back to the build it took it from, when a worker
of that build still polls.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import structlog
from temporalio.client import Client
from temporalio.service import RPCError

from npaflow.temporal.deployments import current_build, describe
from worker.deployment import (
    Deployment,
    adopt_if_first,
    build_is_polled,
    set_current,
)

log = structlog.get_logger(__name__)


@asynccontextmanager
async def adopted(
    client: Client, deployment: Deployment | None, task_queue: str, *, take_over: bool
) -> AsyncIterator[None]:
    """Make this build current as `adopt_if_first` does; a dev take-over is undone on exit."""
    if deployment is None:
        yield
        return
    replaced = current_build(await describe(client, deployment.name)) if take_over else ""
    took = await adopt_if_first(client, deployment, take_over=take_over)
    try:
        yield
    finally:
        if took and replaced and replaced != deployment.build_id:
            await _hand_back(client, deployment, replaced, task_queue)


async def _hand_back(client: Client, deployment: Deployment, build_id: str, task_queue: str) -> None:
    """Route new runs to `build_id` again when a live worker of it still polls."""
    try:
        if not await build_is_polled(client, deployment.name, build_id):
            return
        described = await describe(client, deployment.name)
        if described is None or current_build(described) != deployment.build_id:
            return  # someone else moved it meanwhile: theirs to keep
        await set_current(client, deployment.name, build_id, described.conflict_token)
    except RPCError as exc:
        log.warning("deployment.hand_back_failed", build_id=build_id, error=exc.message[:200])
        return
    log.info("deployment.handed_back", build_id=build_id, task_queue=task_queue)
