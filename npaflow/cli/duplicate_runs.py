"""What `submit` says when its run id is already running (or already completed)."""

from __future__ import annotations

from typing import Any

from temporalio.client import WorkflowExecutionStatus, WorkflowHandle

from npaflow.cli.run_handlers import status_once
from npaflow.errors import UsageError
from npaflow.runtime.contract import RunMemo
from npaflow.runtime.request import RunRequest
from npaflow.runtime.summary import RunSummary
from npaflow.temporal.client import RunMissing, describe_or_fail


async def duplicate_of(handle: WorkflowHandle[Any, RunSummary], request: RunRequest) -> str | None:
    """What to say when the run id is already running (None when it is not).

    Only "not found" is a fresh start: any other answer from the server is an error,
    never read as "no such run" (a start would then attach to a run it could not see).

    Raises:
        UsageError: it runs with other --var values, it already completed, the id holds
            another tool's workflow, or the server refused to say.
    """
    try:
        description = await describe_or_fail(handle)  # refuses another tool's workflow, server errors
    except RunMissing:
        return None  # no such run: a fresh start
    if description.status == WorkflowExecutionStatus.COMPLETED:
        raise UsageError(
            f"run id '{handle.id}' already completed successfully; a completed run is "
            "never re-run (hint: choose another --run-id)"
        )
    if description.status != WorkflowExecutionStatus.RUNNING:
        return None
    running = RunMemo.read(await description.memo()).vars
    if running != request.vars:
        keys = sorted(set(running) | set(request.vars))
        changes = [
            f"{k}: {running.get(k, '<unset>')!r} -> {request.vars.get(k, '<unset>')!r}"
            for k in keys
            if running.get(k) != request.vars.get(k)
        ]
        raise UsageError(
            f"run id '{handle.id}' is already running with other --var values "
            f"({'; '.join(changes)}); choose another --run-id, or cancel it first"
        )
    return f"run {handle.id} is already running (attach with --attach):\n" + await status_once(handle)
