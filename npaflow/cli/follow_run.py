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

from temporalio import exceptions
from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.service import RPCError

from npaflow.cli.exits import EXIT_CANCELLED, EXIT_CAPACITY, EXIT_FAILED, StoppedFollowing
from npaflow.cli.live_view import live_view
from npaflow.cli.progress import Progress, follow
from npaflow.cli.run_endings import next_steps
from npaflow.errors import UsageError
from npaflow.printable import printable
from npaflow.runtime.status import FailureClass
from npaflow.runtime.summary import RunSummary
from npaflow.runtime.vocabulary import RunEnding
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
        behind = _ended_behind(error, handle.id, as_json=as_json)
        if behind is not None:
            print(behind[0])
            return behind[1]
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


def _ended_behind(error: WorkflowFailureError, run_id: str, *, as_json: bool) -> tuple[str, int] | None:
    """A run terminated or timed out (its code ran no cleanup): what to print, and the exit code.

    Terminated is an abort from outside (exit 130, as a cancel); a timeout is a failure (exit 1).
    """
    if isinstance(error.cause, exceptions.TerminatedError):
        ending, code, reason = RunEnding.TERMINATED, EXIT_CANCELLED, error.cause.message
    elif isinstance(error.cause, exceptions.TimeoutError):
        ending, code, reason = RunEnding.TIMED_OUT, EXIT_FAILED, "its execution timeout expired"
    else:
        return None
    if as_json:
        return json.dumps({"run_id": run_id, "status": ending.value, "reason": reason}), code
    lines = [
        f"status: {ending.value}",
        f"run_id: {run_id}",
        f"reason: {printable(reason) or '-'} (outside npaflow: its code ran no cleanup)",
        f"next: npaflow status {run_id}  (its last jobs, as the workers' reconciler ends and records them)",
        f"      npaflow resume {run_id}  (continues; completed waves are not run again)",
    ]
    return "\n".join(lines), code
