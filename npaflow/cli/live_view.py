"""A running run's status as people are shown it: its `status` answer, and its awaits' latest word.

The run learns a job's status and its tasks' starts only when the job's await ends;
each await's heartbeat (kept by the server in the run's pending activities) has
the backend's latest word. `submit --wait`, `status --watch` and the page merge it
in, so a running attempt shows its backend status and its tasks' starts (solid
bars, spend from the job's own start) while it runs.
"""

from __future__ import annotations

import time
from typing import Any

from temporalio.client import WorkflowExecutionDescription, WorkflowHandle
from temporalio.service import RPCError

from npaflow.cli.clock import utc_now_text
from npaflow.cli.status_query import queried_status
from npaflow.runtime.ledger import TaskRow, WaveAttemptRecord, attempt_usage
from npaflow.runtime.messages import HeartbeatDetails
from npaflow.runtime.stalls import stall_lines
from npaflow.runtime.status import JobStatus
from npaflow.runtime.summary import RunStatusView, WaveView
from npaflow.runtime.usage import RunUsage, Usage
from npaflow.runtime.vocabulary import WaveStatus
from npaflow.temporal.pending import open_activities, pending_calls, polled_jobs


async def live_view(
    handle: WorkflowHandle[Any, Any], seconds: float, description: WorkflowExecutionDescription | None = None
) -> RunStatusView:
    """The status query's answer (counted up to now), each running job's heartbeat merged in, its stalls.

    `description`: the run's, when the caller has just read it (else it is read here).

    Raises:
        TimeoutError: the query went unanswered within `seconds`.
    """
    now = utc_now_text()
    view = await queried_status(handle, seconds, now)
    if description is None:
        try:
            description = await handle.describe()
        except RPCError:
            return view
    opened = await open_activities(description)
    polled = polled_jobs(opened)
    waves = [_merged(wave, polled) for wave in view.waves]
    usage = view.usage.model_copy(deep=True)
    for before, after in zip(view.waves, waves, strict=True):
        if after.tasks and not before.tasks:  # the job's own start replaces the launch's on the clock
            _recount(usage, before, after, now)
    stalled = stall_lines(pending_calls(opened), time.time())
    return view.model_copy(update={"waves": waves, "usage": usage.rounded(), "stalled": stalled})


def _recount(usage: RunUsage, before: WaveView, after: WaveView, now: str) -> None:
    """Move one running attempt's hours from the launch's clock to its tasks' own starts."""
    for parts, sign in ((attempt_usage(_record(before), now), -1), (attempt_usage(_record(after), now), 1)):
        for state, gpu, node, _ in parts:
            usage.add(sign * gpu, sign * node, failed=False)
            usage.by_state.setdefault(state, Usage()).add(sign * gpu, sign * node, failed=False)


def _record(wave: WaveView) -> WaveAttemptRecord:
    return WaveAttemptRecord(**dict(wave))


def _merged(wave: WaveView, polled: dict[str, HeartbeatDetails]) -> WaveView:
    details = polled.get(wave.job_id)
    if wave.status is not WaveStatus.RUNNING or details is None:
        return wave
    update: dict[str, Any] = {"sky_status": details.last_status}
    if not wave.tasks and details.task_starts:
        update["tasks"] = [
            TaskRow(job_id=wave.job_id, task_id=int(task), start_at=start, status=JobStatus.RUNNING)
            for task, start in sorted(details.task_starts.items(), key=lambda pair: int(pair[0]))
            if task.isdigit()
        ]
    return wave.model_copy(update=update)
