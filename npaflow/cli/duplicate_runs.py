"""What `submit` says when its run id is already running (or already completed)."""

from __future__ import annotations

from typing import Any

from temporalio.client import WorkflowExecutionStatus, WorkflowHandle

from npaflow.cli.run_handlers import status_once
from npaflow.errors import UsageError
from npaflow.runtime.contract import RunMemo
from npaflow.runtime.request import RunRequest
from npaflow.runtime.summary import RunSummary


async def duplicate_of(handle: WorkflowHandle[Any, RunSummary], request: RunRequest) -> str | None:
    """What to say when the run id is already running (None when it is not).

    Raises:
        UsageError: it runs with other --var values, or it already completed.
    """
    try:
        description = await handle.describe()
    except Exception:  # noqa: BLE001 - no such run (or not visible yet): a fresh start
        return None
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
