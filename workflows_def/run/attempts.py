"""One wave attempt: launch (shielded), await its exact job, settle it; cancel it by exact id.

`AttemptRunner` applies `RunState.waves` transitions and owns launches still in
progress (a cancel mid-launch still learns the job id). The retry budgets
around it are workflows_def/run/executor.py's.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, is_cancelled_exception

from npaflow.images import wave_images
from npaflow.runtime.cache.messages import CacheLookupResult
from npaflow.runtime.contract import AWAIT_WAVE, LAUNCH_WAVE
from npaflow.runtime.ledger import CarriedMember
from npaflow.runtime.ledger.book import AttemptId
from npaflow.runtime.messages import AwaitEnd, AwaitResult, AwaitWaveInput, LaunchWaveInput
from npaflow.runtime.metrics import Metric
from npaflow.runtime.status import FailureClass, JobStatus
from npaflow.runtime.vocabulary import CancellationState
from npaflow.traversal import Wave
from npaflow.waves import WaveKey, items_text
from workflows_def.activity_calls import (
    LAUNCH_HEARTBEAT_TIMEOUT,
    LAUNCH_TIMEOUT,
    PERSISTENT_RETRY,
    POLL_HEARTBEAT_TIMEOUT,
    classify_activity_error,
    decode,
    job_of,
    launch_moved_to,
    now,
    queue_for,
    start,
    wait_timeout,
    worker_bound,
)
from workflows_def.fanout.member_attempts import retry_launches, this_execution
from workflows_def.fanout.member_outputs import unconfirmed_member_outputs
from workflows_def.metrics import count
from workflows_def.run.budget import GpuBudget, budget_stop
from workflows_def.run.cancellation import CancelOutcome, JobCanceller
from workflows_def.run.outputs import (
    AttemptOutcome,
    OutputsUnreadableError,
    failure_class_of,
    failure_text,
    missing_outputs,
)
from workflows_def.run_deps import RunDeps


class AttemptRunner:
    """Runs single wave attempts and cancels their jobs; owns launches still in progress."""

    def __init__(self, deps: RunDeps) -> None:
        self.request = deps.request
        self.loaded = deps.loaded
        self.state = deps.state
        self.recorder = deps.recorder
        self.pending_launches: dict[AttemptId, workflow.ActivityHandle[object]] = {}
        self.budget = GpuBudget(deps.request, deps.loaded.prior.gpu_hours)
        self.cancels = JobCanceller(deps, self.pending_launches)

    async def run(
        self, wave: Wave, attempt: int, *, reconcile: bool = False, cache: CacheLookupResult | None = None
    ) -> AttemptOutcome:
        """Launch (shielded: a cancel mid-launch still learns the job id), then await it.

        A local-backend launch that began on a worker that died is reconciled on
        that worker's own queue (its host holds any job it made), never relaunched.
        """
        self.budget.check(wave)
        images = wave_images(wave, self.loaded.catalog, self.request.images)
        steps = list(cache.steps) if cache else None
        launches = cache.unserved(wave) if cache else wave  # hits of a batch launch nothing
        carried: list[CarriedMember] = []
        if wave.fan_out is not None and attempt > 1:  # a retry: only the members not done yet
            launches, carried = retry_launches(launches, this_execution(self.state, wave))
        self.state.waves.launching(
            wave, attempt, now=now(), cache=steps, images=images, launches=launches, carried=carried
        )
        queue: str | None = None
        while True:
            handle = self._start_launch(
                launches, attempt, reconcile=reconcile or queue is not None, queue=queue
            )
            self.pending_launches[(wave.key, attempt)] = handle
            try:
                launch = decode(LAUNCH_WAVE, await asyncio.shield(handle))
            except ActivityError as error:
                if is_cancelled_exception(error):
                    raise
                del self.pending_launches[(wave.key, attempt)]
                moved = launch_moved_to(error)
                if moved and queue is None:
                    queue = moved
                    continue
                failure_class, message = classify_activity_error(error)
                return await self._fail(wave.key, attempt, message, failure_class)
            break
        del self.pending_launches[(wave.key, attempt)]
        self.state.waves.launched(wave.key, attempt, launch)
        count(Metric.WAVES_LAUNCHED, spec=self.state.workflow, backend=self.request.backend.value)
        await self.recorder.sync()
        return await self.await_job(wave.key, attempt)

    def _start_launch(
        self, wave: Wave, attempt: int, *, reconcile: bool, queue: str | None
    ) -> workflow.ActivityHandle[object]:
        bound = {"schedule_to_start_timeout": timedelta(seconds=self.request.worker_lost_seconds)}
        return start(
            LAUNCH_WAVE,
            LaunchWaveInput(
                run_id=self.state.run_id,
                workflow=self.state.workflow,
                wave=wave,
                attempt=attempt,
                backend=self.request.backend,
                catalog=self.loaded.catalog,
                secret_env=self.request.secret_env,
                infra=self.request.infra,
                images=self.request.images,
                ledger_uri=self.loaded.ledger_uri,
                reconcile=reconcile,
                transport_recovery_seconds=self.request.transport_recovery_seconds,
            ),
            task_queue=queue,
            **(bound if queue else {}),
            start_to_close_timeout=LAUNCH_TIMEOUT,
            heartbeat_timeout=LAUNCH_HEARTBEAT_TIMEOUT,
            retry_policy=PERSISTENT_RETRY,
            summary=f"launch wave {wave.key.sequence:03d}: {wave.key.label()}"
            f"{items_text([s.item_label for s in wave.steps])} (attempt {attempt})",
        )

    async def await_job(self, key: WaveKey, attempt: int) -> AttemptOutcome:
        """Poll the attempt's exact job to the end, then settle the attempt."""
        record = self.state.waves.attempt(key, attempt)
        job = job_of(record, self.request)
        budget_seconds, budget_text = self.budget.allowance(record)
        try:
            handle = start(
                AWAIT_WAVE,
                AwaitWaveInput(
                    job=job,
                    wave_key=key,
                    poll_seconds=self.request.poll_seconds,
                    max_wait_seconds=self.request.max_wait_seconds,
                    pending_timeout_seconds=self.request.pending_timeout_seconds,
                    transport_recovery_seconds=self.request.transport_recovery_seconds,
                    budget_seconds=budget_seconds,
                    budget_text=budget_text,
                ),
                task_queue=queue_for(AWAIT_WAVE, job),
                **worker_bound(job, self.request),
                start_to_close_timeout=wait_timeout(self.request.max_wait_seconds),
                heartbeat_timeout=POLL_HEARTBEAT_TIMEOUT,
                retry_policy=PERSISTENT_RETRY,
                summary=f"await job {record.job_id}: {record.key.label()}{items_text(record.items)}"
                f" (attempt {attempt})",
            )
            raw = await self.budget.await_within(handle, budget_seconds)
            result = decode(AWAIT_WAVE, raw) if raw is not None else budget_stop(record, budget_text)
        except ActivityError as error:
            if is_cancelled_exception(error):
                raise
            failure_class, message = classify_activity_error(error, job)
            result = AwaitResult(
                status=record.sky_status or JobStatus.UNKNOWN,
                end=AwaitEnd.UNREADABLE,
                error=message,
                failure_class=failure_class,
            )
        self.state.waves.observed(key, attempt, result)
        outcome = await self._settle(key, attempt, result)
        self.budget.charge(self.state.waves.attempt(key, attempt).with_hours().gpu_hours)
        return outcome

    async def _settle(self, key: WaveKey, attempt: int, result: AwaitResult) -> AttemptOutcome:
        if result.end is AwaitEnd.TIMED_OUT and not self.request.cancel_on_timeout:
            self.state.waves.left_running(key, attempt, error=result.error)
            await self.recorder.sync()
            return AttemptOutcome(ok=False, error=result.error, kept=True)
        if result.end is not AwaitEnd.TERMINAL:
            cancelled = await self.cancels.cancel_job(key, attempt)
            unverified = cancelled.cancellation.state is not CancellationState.VERIFIED
            if result.end is AwaitEnd.LOST and unverified:
                error = (
                    f"{result.error}; it may still run and cancelling it by id was not verified "
                    f"({cancelled.cancellation.state.value}), so no second job is launched"
                )
                outcome = await self._fail(key, attempt, error, failure_class_of(result), cancelled)
                return replace(outcome, fail_closed=True)
            if result.end is AwaitEnd.LOST and not (cancelled.status and cancelled.status.is_terminal()):
                cancelled = replace(cancelled, status=JobStatus.FAILED_CONTROLLER)  # reference §6.4.5
            return await self._fail(key, attempt, result.error, failure_class_of(result), cancelled)
        record = self.state.waves.attempt(key, attempt)
        if not result.status.is_success():
            failure_class = result.failure_class or result.status.failure_class()
            reason = result.error or next((t.failure_reason for t in result.tasks if t.failure_reason), "")
            return await self._fail(key, attempt, failure_text(record, result, reason), failure_class)
        try:
            missing = await missing_outputs(self.request, key, [a.uri for a in record.outputs])
        except OutputsUnreadableError as exc:
            unread = [artifact.uri for artifact in record.outputs]  # confirmed none: members run again
            return await self._fail(key, attempt, str(exc), exc.failure_class, unconfirmed=unread)
        if missing:
            text = f"wave {key} completed without declared durable output(s): {missing}"
            return await self._fail(key, attempt, text, FailureClass.PAYLOAD, unconfirmed=missing)
        self.state.waves.succeeded(key, attempt, now=now())
        return AttemptOutcome(ok=True)  # exported with the next launch, wait, or the run's end

    async def _fail(
        self,
        key: WaveKey,
        attempt: int,
        error: str,
        failure_class: FailureClass,
        cancelled: CancelOutcome | None = None,
        *,
        unconfirmed: list[str] | None = None,
    ) -> AttemptOutcome:
        record = self.state.waves.attempt(key, attempt)
        if unconfirmed is None and record.items:  # a fan-out batch's members that ran: their outputs
            tasks = cancelled.tasks if cancelled and cancelled.tasks else record.tasks
            unconfirmed = await unconfirmed_member_outputs(self.request, record, tasks)
            error += f"; declared output(s) not found after it: {unconfirmed}" if unconfirmed else ""
        self.state.waves.failed(
            key,
            attempt,
            error=error,
            category=failure_class,
            now=now(),
            cancellation=cancelled.cancellation if cancelled else None,
            final_status=cancelled.status if cancelled else None,
            tasks=cancelled.tasks if cancelled else None,
            unconfirmed_outputs=unconfirmed,
        )
        count(Metric.WAVE_ATTEMPTS_FAILED, spec=self.state.workflow, failure_class=failure_class.value)
        await self.recorder.sync()
        return AttemptOutcome(ok=False, error=error, failure_class=failure_class)
