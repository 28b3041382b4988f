"""Following a run live (`submit --wait`, `status --watch`): its status, its jobs, its workers.

The view is the run's `status` query with each running job's await heartbeat merged
in (npaflow/cli/live_view.py), and a line whenever no worker polls the run's task queue.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from temporalio.client import Client, WorkflowHandle

from npaflow.cli.live_view import live_view
from npaflow.cli.progress import Progress, follow
from npaflow.temporal.client import has_pollers


async def follow_run(
    client: Client, handle: WorkflowHandle[Any, Any], queue: str, ended: Callable[[], Awaitable[bool]]
) -> None:
    """Show the run's progress until `ended()` (in place on a terminal, a line per change otherwise)."""
    with Progress() as progress:
        await follow(
            lambda: live_view(client, handle, 5), ended, progress, no_worker=_no_worker_check(client, queue)
        )


def no_worker_text(queue: str) -> str:
    """What to say while no worker polls the run's task queue."""
    return (
        f"no worker polls task queue '{queue}': the run waits until one starts "
        f"(NPAFLOW_TASK_QUEUE={queue} npaflow worker, or npaflow dev for the default queue)"
    )


def _no_worker_check(client: Client, queue: str) -> Callable[[], Awaitable[str]]:
    async def check() -> str:
        return "" if await has_pollers(client, queue) else no_worker_text(queue)

    return check
