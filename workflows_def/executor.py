"""The Temporal executor: the traversal's requests become activity calls, attempts and retries.

Sequences activities and applies `RunState` transitions; the pause gate, suspension
and continue-as-new are workflow primitives over the state's flags, never callbacks.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, is_cancelled_exception

from npaflow.errors import PayloadError
from npaflow.runtime.contract import READ_DECISION, WAIT_TRIGGER
from npaflow.runtime.ledger import (
    DecisionRecord,
    LedgerStatus,
    WaveAttemptRecord,
    WaveStatus,
    latest_attempts,
)
from npaflow.runtime.messages import LoadedSpec, ReadDecisionInput, WaitTriggerInput
from npaflow.runtime.request import OnFailure, RunRequest
from npaflow.runtime.run_state import RunState
from npaflow.runtime.status import RetryBudget
from npaflow.traversal import DecisionRequest, TriggerRequest, Wave, WaveOutcome
from workflows_def.activity_calls import (
    PERSISTENT_RETRY,
    POLL_HEARTBEAT_TIMEOUT,
    call,
    call_local,
    classify_activity_error,
    queue_for,
    wait_timeout,
)
from workflows_def.ledger_sync import LedgerSync
from workflows_def.visibility import publish
from workflows_def.wave_attempt import AttemptOutcome, AttemptRunner, now


class TemporalExecutor:
    """Runs waves within both retry budgets; replays and adopts what earlier executions did."""

    def __init__(self, request: RunRequest, loaded: LoadedSpec, state: RunState,
                 ledger: LedgerSync) -> None:
        self.request = request
        self.loaded = loaded
        self.state = state
        self.ledger = ledger
        self.attempts = AttemptRunner(request, loaded, state, ledger)
        self.prior_decisions = list(loaded.prior.decisions)
        self.prior = latest_attempts(loaded.prior.waves)

    async def run_wave(self, wave: Wave) -> WaveOutcome:
        """Replay, adopt, or launch the wave; retry within budgets; suspend if asked to."""
        await self._continue_as_new_if_suggested()
        await self._pause_gate()
        self.state.current_states = wave.states
        prior = self.prior.pop(wave.key, None)
        if prior is not None:
            outcome = await self._resume_from(wave, prior)
            if outcome is not None:
                return outcome
        if prior is not None and prior.status is WaveStatus.RUNNING and not prior.job_id:
            # An earlier execution crossed the launch boundary without learning the job:
            # the same attempt again, reconciled by request id and name (never a second job).
            return await self._attempts(wave, prior.attempt, reconcile=True)
        return await self._attempts(wave, prior.attempt + 1 if prior else 1)

    async def _resume_from(self, wave: Wave, prior: WaveAttemptRecord) -> WaveOutcome | None:
        if prior.status is WaveStatus.SUCCEEDED:
            trusted = self.request.continued  # our own earlier execution just checked them
            outputs = [a.uri for a in prior.outputs]
            if trusted or not await self.attempts.missing_outputs(prior.key, outputs):
                self.state.wave_replayed(prior)
                return WaveOutcome(succeeded=True)
            return None
        if prior.status is WaveStatus.RUNNING and prior.job_id:
            self.state.wave_adopted(prior)
            outcome = await self.attempts.await_job(prior.key, prior.attempt)
            if outcome.ok:
                return WaveOutcome(succeeded=True)
        return None

    async def _attempts(self, wave: Wave, attempt: int, *, reconcile: bool = False) -> WaveOutcome:
        budgets = {RetryBudget.RETRIES: self.request.retries,
                   RetryBudget.INFRASTRUCTURE: self.request.max_infrastructure_recoveries}
        failures = 0
        while True:
            outcome = await self.attempts.run(wave, attempt, reconcile=reconcile)
            if outcome.ok:
                return WaveOutcome(succeeded=True)
            reconcile = False
            budget = outcome.failure_class.budget()
            if not outcome.kept and budgets.get(budget, 0) > 0:
                budgets[budget] -= 1
                failures += 1
                await workflow.sleep(timedelta(seconds=self.request.backoff_seconds(failures)),
                                     summary=f"backoff before attempt {attempt + 1} of {wave.key}")
            elif self._suspends(outcome):
                await self._suspend(outcome.error)
            else:
                self.state.failure_class = outcome.failure_class
                return WaveOutcome(succeeded=False, error=outcome.error)
            attempt += 1

    def _suspends(self, outcome: AttemptOutcome) -> bool:
        retryable = outcome.failure_class.budget() is not RetryBudget.NONE and not outcome.kept
        return retryable and self.request.on_failure is OnFailure.SUSPEND

    async def _suspend(self, error: str) -> None:
        """Park a failed wave until `resume` (a new attempt) or cancel."""
        self.state.run_suspended(error)
        publish(self.state)
        await self.ledger.export(LedgerStatus.SUSPENDED, error=error)
        await workflow.wait_condition(lambda: self.state.resume_requested)
        self.state.run_resumed()
        publish(self.state)
        await self.ledger.export(LedgerStatus.RUNNING, error="")

    async def _pause_gate(self) -> None:
        """In front of every new launch: wait while an operator has the run paused."""
        if not self.state.pause_requested:
            return
        await self.ledger.flush()
        self.state.run_paused()
        publish(self.state)
        await workflow.wait_condition(lambda: not self.state.pause_requested)
        self.state.run_resumed()
        publish(self.state)

    async def _continue_as_new_if_suggested(self) -> None:
        """At a wave boundary with nothing in flight, start a fresh history from the ledger."""
        if not workflow.info().is_continue_as_new_suggested():
            return
        if self.state.in_flight() or self.attempts.pending_launches:
            return
        await self.ledger.flush()
        await workflow.wait_condition(workflow.all_handlers_finished)
        workflow.continue_as_new(self.request.model_copy(update={"continued": True}))

    async def read_decision(self, request: DecisionRequest) -> str:
        """Read a decision artifact; the explicit assumption is only a missing-artifact fallback.

        Decisions an earlier execution of this run already took are replayed from the
        ledger in order, so the walk retraces its path even if an artifact was overwritten.
        """
        if self.prior_decisions:
            head = self.prior_decisions[0]
            if (head.state, head.uri) == (request.state, request.uri) and head.decision \
                    and not head.decode_error:
                self.prior_decisions.pop(0)
                return head.decision
            self.prior_decisions.clear()  # the walk diverged: read everything fresh from here
        try:
            result = await call_local(
                READ_DECISION, ReadDecisionInput(state=request.state, uri=request.uri,
                                                 fallback=self.request.assume_decision),
                schedule_to_close_timeout=timedelta(
                    seconds=max(300.0, self.request.transport_recovery_seconds)),
                retry_policy=PERSISTENT_RETRY,
                summary=f"read decision of {request.state} from {request.uri}")
        except ActivityError as error:
            if is_cancelled_exception(error):
                raise
            _, message = classify_activity_error(error)
            self.state.add_decision(DecisionRecord(state=request.state, uri=request.uri,
                                                   read_at=now(), source="error",
                                                   decode_error=message[:200]))
            raise PayloadError(f"state {request.state}: cannot read decision artifact "
                               f"{request.uri}: {message}") from None
        self.state.add_decision(result.record)
        if result.error:
            raise PayloadError(result.error)
        return result.decision

    async def wait_trigger(self, request: TriggerRequest) -> None:
        """Wait for the prefix unless this state's watermark already fired."""
        known = self.state.watermarks.get(request.state) or self.loaded.prior.watermarks.get(request.state)
        if known is not None and known.objects >= request.trigger.min_objects:
            return
        self.state.current_states = [request.state]
        await self.ledger.flush()
        result = await call(
            WAIT_TRIGGER, WaitTriggerInput(state=request.state, uri=request.uri,
                                           trigger=request.trigger,
                                           max_wait_seconds=self.request.max_wait_seconds),
            task_queue=queue_for(WAIT_TRIGGER),
            start_to_close_timeout=wait_timeout(self.request.max_wait_seconds),
            heartbeat_timeout=POLL_HEARTBEAT_TIMEOUT, retry_policy=PERSISTENT_RETRY,
            summary=f"wait for {request.uri} ({request.state})")
        if result.error or result.watermark is None:
            raise PayloadError(result.error or f"state {request.state}: trigger gave up")
        self.state.add_watermark(request.state, result.watermark)
