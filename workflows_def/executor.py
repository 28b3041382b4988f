"""A wave's attempts: the two retry budgets around one attempt's launch, await and settle.

`TemporalExecutor` is what the traversal drives (`Executor` in npaflow/traversal):
it replays and adopts what earlier executions did and retries within both
budgets. `AttemptRunner` runs one attempt, applying `RunState.waves` transitions;
it owns launches still in progress. The run's waits (pause, suspension,
continue-as-new) are workflows_def/run_gates.py, the decision and trigger reads
workflows_def/readings.py, cancelling by exact id workflows_def/cancellation.py.
Nothing calls back into the workflow object.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, is_cancelled_exception

from npaflow.images import wave_images
from npaflow.runtime.cache_messages import CacheLookupResult
from npaflow.runtime.contract import AWAIT_WAVE, LAUNCH_WAVE
from npaflow.runtime.ledger import WaveAttemptRecord, latest_attempts
from npaflow.runtime.ledger.book import AttemptId
from npaflow.runtime.messages import AwaitEnd, AwaitResult, AwaitWaveInput, LaunchWaveInput
from npaflow.runtime.metrics import BudgetLabel, Metric
from npaflow.runtime.status import FailureClass, JobStatus, RetryBudget
from npaflow.runtime.vocabulary import CancellationState, WaveStatus
from npaflow.traversal import DecisionRequest, TriggerRequest, Wave, WaveOutcome
from npaflow.waves import WaveKey
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
from workflows_def.budget import GpuBudget, budget_stop
from workflows_def.cancellation import CancelOutcome, JobCanceller
from workflows_def.cleanup import cleaned_up
from workflows_def.metrics import count
from workflows_def.outputs import (
    AttemptOutcome,
    OutputsUnreadableError,
    failure_class_of,
    failure_text,
    missing_outputs,
)
from workflows_def.quota_leases import QuotaLeases
from workflows_def.readings import ArtifactReads
from workflows_def.run_deps import RunDeps
from workflows_def.run_gates import RunGates
from workflows_def.stage_cache import StageCache


class TemporalExecutor:
    """Runs waves within both retry budgets; replays and adopts what earlier executions did."""

    def __init__(self, deps: RunDeps) -> None:
        self.request, self.state = deps.request, deps.state
        self.reads = ArtifactReads(deps)
        self.attempts = AttemptRunner(deps)
        self.gates = RunGates(deps, self.attempts.pending_launches)
        self.cache = StageCache(deps)
        self.leases = QuotaLeases(deps)
        self.prior = latest_attempts(deps.loaded.prior.latest())

    async def read_decision(self, request: DecisionRequest) -> str:
        """The decision artifact's value (npaflow/traversal's Executor protocol)."""
        return await self.reads.read_decision(request)

    async def assume_decision(self, request: DecisionRequest) -> str:
        """The assumption standing in for a decision."""
        return await self.reads.assume_decision(request)

    async def wait_trigger(self, request: TriggerRequest) -> None:
        """Wait for a trigger's prefix."""
        await self.reads.wait_trigger(request)

    async def run_wave(self, wave: Wave) -> WaveOutcome:
        """Replay, adopt, or launch the wave; retry within budgets; suspend if asked to."""
        await self.gates.continue_as_new_if_suggested()
        await self.gates.pause_gate()
        self.state.states_entered(wave.states)
        prior = self.prior.pop(wave.key, None)
        if prior is not None:
            outcome = await self._resume_from(wave, prior)
            if outcome is not None:
                return outcome
        if prior is not None and prior.status is WaveStatus.RUNNING and not prior.job_id:
            # An earlier execution crossed the launch boundary without learning the job:
            # the same attempt again, reconciled by request id and name (never a second job).
            return await self._attempts(wave, prior.attempt, reconcile=True)
        attempt = prior.attempt + 1 if prior else 1
        if not self.cache.applies(wave):
            return await self._attempts(wave, attempt)
        found = await self.cache.lookup(wave)
        return await cleaned_up(self._served_or_run(wave, attempt, found), lambda: self.cache.land(wave))

    async def _served_or_run(self, wave: Wave, attempt: int, found: CacheLookupResult) -> WaveOutcome:
        """Serve the wave from the cache (after another run's flight landed), or run and store it."""
        if self.cache.flies(wave, found):
            found = await self.cache.take_flight(wave, found)
        if found.served:
            self.cache.serve(wave, attempt, found)
            return WaveOutcome(succeeded=True)
        self.cache.counted(found)
        return await self._attempts(wave, attempt, cache=found)

    async def _resume_from(self, wave: Wave, prior: WaveAttemptRecord) -> WaveOutcome | None:
        if prior.status is WaveStatus.SUCCEEDED:
            trusted = self.request.continued  # our own earlier execution just checked them
            outputs = [a.uri for a in prior.outputs]
            if trusted or not await missing_outputs(self.request, prior.key, outputs):
                self.state.waves.replayed(prior)
                return WaveOutcome(succeeded=True)
            return None
        if prior.status is WaveStatus.RUNNING and prior.job_id:
            self.state.waves.adopted(prior)
            outcome = await self.attempts.await_job(prior.key, prior.attempt)
            if outcome.ok:
                return WaveOutcome(succeeded=True)
        return None

    async def _attempts(
        self, wave: Wave, attempt: int, *, reconcile: bool = False, cache: CacheLookupResult | None = None
    ) -> WaveOutcome:
        """Within both retry budgets, holding the wave's GPUs from the run's quota pool (if any)."""
        return await self.leases.held(wave, lambda: self._within_budgets(wave, attempt, reconcile, cache))

    async def _within_budgets(
        self, wave: Wave, attempt: int, reconcile: bool, cache: CacheLookupResult | None
    ) -> WaveOutcome:
        budgets = {
            RetryBudget.RETRIES: self.request.retries,
            RetryBudget.INFRASTRUCTURE: self.request.max_infrastructure_recoveries,
        }
        failures = 0
        while True:
            outcome = await self.attempts.run(wave, attempt, reconcile=reconcile, cache=cache)
            if outcome.ok:
                if cache is not None:
                    await self.cache.store(wave, attempt, cache)
                return WaveOutcome(succeeded=True)
            reconcile = False
            budget = outcome.failure_class.budget()
            if not (outcome.kept or outcome.fail_closed) and budgets.get(budget, 0) > 0:
                budgets[budget] -= 1
                failures += 1
                count(Metric.WAVE_RETRIES, spec=self.state.workflow, budget=_budget_label(budget).value)
                await workflow.sleep(
                    timedelta(seconds=self.request.backoff_seconds(failures)),
                    summary=f"backoff before attempt {attempt + 1} of {wave.key}",
                )
            elif self.gates.suspends(outcome):
                problem = await self.leases.set_aside(wave, self.gates.suspend, outcome.error)
                if problem:
                    return WaveOutcome(succeeded=False, error=problem)
            else:
                return WaveOutcome(succeeded=False, error=outcome.error)
            attempt += 1


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
        self.state.waves.launching(wave, attempt, now=now(), cache=steps, images=images)
        queue: str | None = None
        while True:
            handle = self._start_launch(wave, attempt, reconcile=reconcile or queue is not None, queue=queue)
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
            summary=f"launch wave {wave.key.sequence:03d}: {wave.key.label()} (attempt {attempt})",
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
                summary=f"await job {record.job_id}: {record.key.label()} (attempt {attempt})",
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
            return await self._fail(key, attempt, str(exc), exc.failure_class)
        if missing:
            return await self._fail(
                key,
                attempt,
                f"wave {key} completed without declared durable output(s): {missing}",
                FailureClass.PAYLOAD,
            )
        self.state.waves.succeeded(key, attempt, now=now())
        return AttemptOutcome(ok=True)  # exported with the next launch, wait, or the run's end

    async def _fail(
        self,
        key: WaveKey,
        attempt: int,
        error: str,
        failure_class: FailureClass,
        cancelled: CancelOutcome | None = None,
    ) -> AttemptOutcome:
        self.state.waves.failed(
            key,
            attempt,
            error=error,
            category=failure_class,
            now=now(),
            cancellation=cancelled.cancellation if cancelled else None,
            final_status=cancelled.status if cancelled else None,
        )
        count(Metric.WAVE_ATTEMPTS_FAILED, spec=self.state.workflow, failure_class=failure_class.value)
        await self.recorder.sync()
        return AttemptOutcome(ok=False, error=error, failure_class=failure_class)


def _budget_label(budget: RetryBudget) -> BudgetLabel:
    return BudgetLabel.PAYLOAD if budget is RetryBudget.RETRIES else BudgetLabel.INFRASTRUCTURE
