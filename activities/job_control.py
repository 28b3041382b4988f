"""Acting on one launched job by its exact id: cancel it (and verify), read its logs.

Both run where the job lives (a local-backend job's own worker queue). A cancel
is verified by polling until the job is terminal or absent on consecutive
answers; past the bound it is recorded as requested, never as done.
"""

from __future__ import annotations

import time

from temporalio import activity

from activities.context import ActivityContext
from activities.errors import mapped_errors
from activities.heartbeat import heartbeating, resume_details
from activities.tracing import tag_span
from npaflow.errors import NpaflowError
from npaflow.runtime.contract import CANCEL_WAVE, READ_JOB_LOGS
from npaflow.runtime.ledger import TaskRow
from npaflow.runtime.messages import CancelResult, CancelWaveInput
from npaflow.runtime.reads import JobLogs, ReadJobLogsInput
from npaflow.runtime.status import JobStatus, aggregate_job_status
from npaflow.runtime.vocabulary import CancellationState, HeartbeatPhase

#: Consecutive answers without the job, after a cancel, that verify it is gone.
ABSENT_ANSWERS_TO_VERIFY = 2


class JobControlActivities:
    """cancel_wave and read_job_logs, bound to the worker's backends and pollers."""

    def __init__(self, context: ActivityContext) -> None:
        self.context = context

    @activity.defn(name=CANCEL_WAVE.name)
    @mapped_errors
    async def cancel_wave(self, request: CancelWaveInput) -> CancelResult:
        """Cancel by exact id, then poll until terminal (verified) or the bound passes (requested)."""
        tag_span(job_id=request.job.job_id)
        backend = self.context.backend(request.job.backend)
        poller = self.context.poller(request.job.backend)
        async with heartbeating(
            resume_details(job_id=request.job.job_id, phase=HeartbeatPhase.CANCELLING)
        ) as hb:
            try:
                await hb.recovering(
                    f"cancel job {request.job.job_id}",
                    lambda: backend.cancel(request.job.job_id),
                    deadline_seconds=request.verify_seconds,
                )
            except NpaflowError as exc:
                return CancelResult(state=CancellationState.FAILED, error=str(exc)[:400])
            deadline = time.monotonic() + request.verify_seconds
            status, absent = JobStatus.UNKNOWN, 0
            seen: list[TaskRow] = []
            while time.monotonic() < deadline:
                try:
                    rows = await poller.observe(request.job.job_id, min(0.2, backend.poll_interval))
                except NpaflowError:
                    absent = 0
                    continue
                absent = 0 if rows else absent + 1
                if absent >= ABSENT_ANSWERS_TO_VERIFY:
                    return CancelResult(
                        state=CancellationState.VERIFIED,
                        status=JobStatus.ABSENT,
                        tasks=seen,
                        error=f"job {request.job.job_id} is absent from the backend's queue on "
                        f"{absent} answers after the cancel",
                    )
                if rows:
                    seen = rows
                    status = aggregate_job_status([row.status for row in rows])
                    hb.update(last_status=status)
                    if status.is_terminal():
                        return CancelResult(state=CancellationState.VERIFIED, status=status, tasks=rows)
            return CancelResult(state=CancellationState.REQUESTED, status=status, tasks=seen)

    @activity.defn(name=READ_JOB_LOGS.name)
    @mapped_errors
    async def read_job_logs(self, request: ReadJobLogsInput) -> JobLogs:
        """The end of one job's logs, read where the job runs."""
        backend = self.context.backend(request.job.backend)
        return JobLogs(text=await backend.logs(request.job.job_id, request.task, request.tail_lines))
