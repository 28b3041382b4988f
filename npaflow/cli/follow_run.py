"""Following a run live (`submit --wait`, `resume --wait`, `status --watch`): its status, jobs, workers.

The view is the run's `status` query with each running job's await heartbeat merged
in (npaflow/cli/live_view.py), and a line whenever no worker that can move the run
polls its task queue (none at all, or none of the build the run is pinned to).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.service import RPCError

from npaflow.cli.exits import EXIT_CANCELLED, EXIT_CAPACITY, EXIT_FAILED, StoppedFollowing
from npaflow.cli.live_view import live_view
from npaflow.cli.progress import Progress, follow
from npaflow.cli.run_endings import next_steps
from npaflow.errors import UsageError
from npaflow.runtime.status import FailureClass
from npaflow.runtime.summary import RunSummary
from npaflow.temporal.client import has_pollers, is_cancelled_failure, summary_from_failure
from npaflow.temporal.serving import Build, no_worker_text, pinned_build, unserved_reason


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


async def wait_and_report(
    client: Client, handle: WorkflowHandle[Any, RunSummary], queue: str, *, as_json: bool
) -> int:
    """Wait for the run (showing live progress unless --json), then print its summary; its exit code.

    Raises:
        StoppedFollowing: Ctrl-C; the run goes on.
    """
    result = asyncio.ensure_future(handle.result())
    try:
        if not as_json:

            async def ended() -> bool:
                return result.done()

            await follow_run(client, handle, queue, ended)
        else:
            if not await has_pollers(client, queue):
                sys.stderr.write(f"npaflow: warning: {no_worker_text(queue)}\n")
        await asyncio.wait([result])
    except asyncio.CancelledError:
        result.cancel()
        raise StoppedFollowing(handle.id) from None
    try:
        summary = await result
        code = 0
    except WorkflowFailureError as error:
        if is_cancelled_failure(error):
            print(
                json.dumps({"run_id": handle.id, "status": "cancelled"})
                if as_json
                else f"status: cancelled\nrun_id: {handle.id}"
            )
            return EXIT_CANCELLED
        failed = summary_from_failure(error)
        if failed is None:
            raise UsageError(f"run failed: {error.cause}") from None
        summary = failed
        code = EXIT_CAPACITY if summary.failure_class is FailureClass.CAPACITY else EXIT_FAILED
    print(summary.model_dump_json(indent=2) if as_json else "\n".join(summary.text_lines()))
    if code and not as_json:
        print("\n".join(next_steps(summary)))
    return code
