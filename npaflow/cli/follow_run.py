"""Following a run live (`submit --wait`, `status --watch`): its status, its jobs, its workers.

The view is the run's `status` query with each running job's await heartbeat merged
in (npaflow/cli/live_view.py), and a line whenever no worker that can move the run
polls its task queue (none at all, or none of the build the run is pinned to).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from temporalio.client import Client, WorkflowHandle
from temporalio.service import RPCError

from npaflow.cli.live_view import live_view
from npaflow.cli.progress import Progress, follow
from npaflow.temporal.serving import Build, pinned_build, unserved_reason


async def follow_run(
    client: Client, handle: WorkflowHandle[Any, Any], queue: str, ended: Callable[[], Awaitable[bool]]
) -> None:
    """Show the run's progress until `ended()` (in place on a terminal, a line per change otherwise)."""
    with Progress() as progress:
        await follow(lambda: live_view(handle, 5), ended, progress, no_worker=_Serving(client, handle, queue))


class _Serving:
    """Why nothing moves the run now: its queue, then the build it is pinned to (learnt once)."""

    def __init__(self, client: Client, handle: WorkflowHandle[Any, Any], queue: str) -> None:
        self.client, self.handle, self.queue = client, handle, queue
        self.build: Build | None = None

    async def __call__(self) -> str:
        if self.build is None:  # a new run is pinned by its first task; it stays on that build
            with contextlib.suppress(RPCError):  # not known yet: the queue alone is checked
                self.build = pinned_build(await self.handle.describe())
        return await unserved_reason(self.client, self.queue, self.build)
