"""Cancelling a run's jobs by exact id, polled until terminal (DESIGN §3.5): every abort path's end.

A cancel that lands while a launch is still in flight first learns that launch's
job id (the launch is shielded), then cancels it: no job escapes a cancel.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, is_cancelled_exception

from npaflow.runtime.contract import CANCEL_WAVE, LAUNCH_WAVE
from npaflow.runtime.ledger import Cancellation, TaskRow
from npaflow.runtime.ledger.book import AttemptId
from npaflow.runtime.messages import CancelWaveInput
from npaflow.runtime.metrics import Metric
from npaflow.runtime.status import JobStatus
from npaflow.runtime.vocabulary import CancellationState
from npaflow.waves import WaveKey
from workflows_def.activity_calls import (
    SHORT_RETRY,
    call,
    classify_activity_error,
    decode,
    job_of,
    now,
    queue_for,
    worker_bound,
)
from workflows_def.metrics import count
from workflows_def.run_deps import RunDeps

#: How long a cancel is polled before it counts as only `requested`.
CANCEL_VERIFY_SECONDS = (2.0, 60.0)


@dataclass
class CancelOutcome:
    """How far cancelling a job got, and the terminal status it was last seen in."""

    cancellation: Cancellation
    status: JobStatus | None = None
    tasks: list[TaskRow] = field(default_factory=list)  # the job's rows the cancel saw


class JobCanceller:
    """Cancels attempts' jobs by exact id; shares the attempt runner's launches still in flight."""

    def __init__(
        self, deps: RunDeps, pending_launches: dict[AttemptId, workflow.ActivityHandle[object]]
    ) -> None:
        self.request = deps.request
        self.state = deps.state
        self.pending_launches = pending_launches
        self.after_jobs_cancelled = deps.after_jobs_cancelled

    async def cancel_job(self, key: WaveKey, attempt: int) -> CancelOutcome:
        """Cancel one attempt's job by exact id, poll it to terminal, and say how far that got."""
        record = self.state.waves.attempt(key, attempt)
        if not record.job_id or (record.sky_status is not None and record.sky_status.is_terminal()):
            return CancelOutcome(record.cancellation)
        job = job_of(record, self.request)
        low, high = CANCEL_VERIFY_SECONDS
        try:
            result = await call(
                CANCEL_WAVE,
                CancelWaveInput(job=job, verify_seconds=max(low, min(high, 4 * self.request.poll_seconds))),
                task_queue=queue_for(CANCEL_WAVE, job),
                **worker_bound(job, self.request),
                start_to_close_timeout=timedelta(minutes=5),
                heartbeat_timeout=timedelta(seconds=30),
                retry_policy=SHORT_RETRY,
                summary=f"cancel job {record.job_id} ({record.job_name})",
            )
        except ActivityError as error:
            if is_cancelled_exception(error):
                raise
            _, message = classify_activity_error(error, job)
            return CancelOutcome(Cancellation(state=CancellationState.FAILED, error=message))
        verified = result.state is CancellationState.VERIFIED
        ended = CancellationState.VERIFIED if verified else CancellationState.FAILED
        count(Metric.CANCELLATIONS, result=ended.value)
        cancellation = Cancellation(state=result.state, error=result.error)
        return CancelOutcome(cancellation, result.status, result.tasks)

    async def settle_pending_launches(self) -> None:
        """After a cancel or failure arrived mid-launch: learn each job id so it can be cancelled."""
        for (key, attempt), handle in list(self.pending_launches.items()):
            del self.pending_launches[(key, attempt)]
            try:
                launch = decode(LAUNCH_WAVE, await handle)
            except ActivityError:
                continue  # the launch failed: there is no job to cancel
            self.state.waves.launched(key, attempt, launch)

    async def cancel_in_flight(self, error: str) -> None:
        """Every path that ends a run comes here first: cancel each in-flight job by exact id.

        Then the cleanup cancelled waves left for this moment (their GPUs go back to the pool).
        """
        try:
            await self._cancel_in_flight(error)
        finally:
            while self.after_jobs_cancelled:
                await self.after_jobs_cancelled.pop(0)()

    async def _cancel_in_flight(self, error: str) -> None:
        await self.settle_pending_launches()
        for record in self.state.waves.in_flight():
            cancelled = await self.cancel_job(record.key, record.attempt)
            if cancelled.status is JobStatus.SUCCEEDED:  # it finished before the cancel took effect
                late = Cancellation(
                    state=CancellationState.VERIFIED, error=f"the job had already succeeded ({error})"
                )
                self.state.waves.succeeded(record.key, record.attempt, now=now(), cancellation=late)
                continue
            self.state.waves.cancelled(
                record.key,
                record.attempt,
                error=error,
                now=now(),
                cancellation=cancelled.cancellation,
                final_status=cancelled.status,
                tasks=cancelled.tasks,
            )
        for key, attempt in self.state.waves.pending_launch():
            self.state.waves.cancelled(key, attempt, error=error, now=now(), cancellation=Cancellation())
