"""Following a run live (`submit --wait`, `status --watch`): its status, its jobs, its workers.

The view is the run's `status` query, each running job's status taken from its
await's heartbeat, and a line whenever no worker polls the run's task queue.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from temporalio.client import Client, WorkflowHandle
from temporalio.service import RPCError

from npaflow.cli.clock import utc_now_text
from npaflow.cli.progress import Progress, follow
from npaflow.cli.temporal_client import has_pollers
from npaflow.runtime.contract import AWAIT_WAVE, STATUS_QUERY
from npaflow.runtime.messages import HeartbeatDetails
from npaflow.runtime.status import JobStatus
from npaflow.runtime.summary import RunStatusView
from npaflow.runtime.vocabulary import WaveStatus


async def follow_run(
    client: Client, handle: WorkflowHandle[Any, Any], queue: str, ended: Callable[[], Awaitable[bool]]
) -> None:
    """Show the run's progress until `ended()` (in place on a terminal, a line per change otherwise)."""
    with Progress() as progress:
        await follow(
            lambda: _live_view(client, handle), ended, progress, no_worker=_no_worker_check(client, queue)
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


async def _live_view(client: Client, handle: WorkflowHandle[Any, Any]) -> RunStatusView:
    """The status query's view, with each running job's status as its await last polled it.

    The run learns a job's status only when its await ends; the await's heartbeat
    (on the server, in the run's pending activities) has the backend's latest word.
    """
    view: RunStatusView = await asyncio.wait_for(
        handle.query(STATUS_QUERY, utc_now_text(), result_type=RunStatusView), 5
    )
    polled = await _polled_job_statuses(client, handle)
    waves = [
        wave.model_copy(update={"sky_status": polled[wave.job_id]})
        if wave.status is WaveStatus.RUNNING and wave.job_id in polled
        else wave
        for wave in view.waves
    ]
    return view.model_copy(update={"waves": waves})


async def _polled_job_statuses(client: Client, handle: WorkflowHandle[Any, Any]) -> dict[str, JobStatus]:
    """Each job's status as its await last saw it (awaits that have polled at least once)."""
    try:
        description = await handle.describe()
    except RPCError:
        return {}
    found: dict[str, JobStatus] = {}
    for pending in description.raw_description.pending_activities:
        if pending.activity_type.name != AWAIT_WAVE.name or not pending.heartbeat_details.payloads:
            continue
        try:
            (details,) = await client.data_converter.decode(
                pending.heartbeat_details.payloads, [HeartbeatDetails]
            )
        except Exception:  # noqa: BLE001 - a detail this build cannot read: show the run's own view
            continue
        if isinstance(details, HeartbeatDetails) and details.job_id and details.polls:
            found[details.job_id] = details.last_status
    return found
