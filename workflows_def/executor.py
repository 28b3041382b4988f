"""The Temporal executor: the traversal's waves become attempts within both retry budgets.

`TemporalExecutor` decides attempts, replays and adopts what earlier executions
did, and holds the pause gate, suspension and continue-as-new; one attempt is
`workflows_def/attempts.py`. Nothing calls back into the workflow object.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from npaflow.runtime.ledger import WaveAttemptRecord, latest_attempts
from npaflow.runtime.metrics import Metric
from npaflow.runtime.notifications import RunEvent
from npaflow.runtime.request import OnFailure
from npaflow.runtime.status import RetryBudget
from npaflow.runtime.vocabulary import WaveStatus
from npaflow.traversal import Wave, WaveOutcome
from workflows_def.attempts import AttemptOutcome, AttemptRunner
from workflows_def.metrics import count
from workflows_def.notify import notify
from workflows_def.readings import ArtifactReads
from workflows_def.recorder import RunDeps


class TemporalExecutor(ArtifactReads):
    """Runs waves within both retry budgets; replays and adopts what earlier executions did."""

    def __init__(self, deps: RunDeps) -> None:
        super().__init__(deps)
        self.attempts = AttemptRunner(deps)
        self.prior = latest_attempts(deps.loaded.prior.latest())

    async def run_wave(self, wave: Wave) -> WaveOutcome:
        """Replay, adopt, or launch the wave; retry within budgets; suspend if asked to."""
        await self._continue_as_new_if_suggested()
        await self._pause_gate()
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
        return await self._attempts(wave, prior.attempt + 1 if prior else 1)

    async def _resume_from(self, wave: Wave, prior: WaveAttemptRecord) -> WaveOutcome | None:
        if prior.status is WaveStatus.SUCCEEDED:
            trusted = self.request.continued  # our own earlier execution just checked them
            outputs = [a.uri for a in prior.outputs]
            if trusted or not await self.attempts.missing_outputs(prior.key, outputs):
                self.state.waves.replayed(prior)
                return WaveOutcome(succeeded=True)
            return None
        if prior.status is WaveStatus.RUNNING and prior.job_id:
            self.state.waves.adopted(prior)
            outcome = await self.attempts.await_job(prior.key, prior.attempt)
            if outcome.ok:
                return WaveOutcome(succeeded=True)
        return None

    async def _attempts(self, wave: Wave, attempt: int, *, reconcile: bool = False) -> WaveOutcome:
        budgets = {
            RetryBudget.RETRIES: self.request.retries,
            RetryBudget.INFRASTRUCTURE: self.request.max_infrastructure_recoveries,
        }
        failures = 0
        while True:
            outcome = await self.attempts.run(wave, attempt, reconcile=reconcile)
            if outcome.ok:
                return WaveOutcome(succeeded=True)
            reconcile = False
            budget = outcome.failure_class.budget()
            if not (outcome.kept or outcome.fail_closed) and budgets.get(budget, 0) > 0:
                budgets[budget] -= 1
                failures += 1
                count(
                    Metric.WAVE_RETRIES,
                    spec=self.state.workflow,
                    budget="payload" if budget is RetryBudget.RETRIES else "infrastructure",
                )
                await workflow.sleep(
                    timedelta(seconds=self.request.backoff_seconds(failures)),
                    summary=f"backoff before attempt {attempt + 1} of {wave.key}",
                )
            elif self._suspends(outcome):
                await self._suspend(outcome.error)
            else:
                return WaveOutcome(succeeded=False, error=outcome.error)
            attempt += 1

    def _suspends(self, outcome: AttemptOutcome) -> bool:
        retryable = outcome.failure_class.budget() is not RetryBudget.NONE
        retryable = retryable and not (outcome.kept or outcome.fail_closed)
        return retryable and self.request.on_failure is OnFailure.SUSPEND

    async def _suspend(self, error: str) -> None:
        """Park a failed wave until `resume` (a new attempt) or cancel."""
        self.state.run_suspended(error)
        await self.recorder.sync()
        await notify(self.state, self.request, RunEvent.SUSPENDED)
        await self.recorder.sync()  # how the notification went, before the wait
        await workflow.wait_condition(lambda: self.state.resume_requested)
        self.state.run_resumed()
        await self.recorder.sync()

    async def _pause_gate(self) -> None:
        """In front of every new launch: nothing launches once a cancel was asked for; wait while paused.

        The `cancel` signal asks Temporal to cancel this execution (REQUEST_CANCEL); a
        launch between the signal and that cancellation (a worker picking up a run
        cancelled while none polled) would start a job only to cancel it.
        """
        if self.state.cancel_reason:
            await workflow.wait_condition(lambda: False)  # the cancellation ends this wait
        if not self.state.pause_requested:
            return
        self.state.launches_held()
        await self.recorder.sync()
        self.state.run_paused()
        await self.recorder.sync()
        await workflow.wait_condition(lambda: not self.state.pause_requested)
        self.state.run_resumed()
        await self.recorder.sync()

    async def _continue_as_new_if_suggested(self) -> None:
        """At a wave boundary with nothing in flight, start a fresh history from the ledger."""
        if not workflow.info().is_continue_as_new_suggested():
            return
        if self.state.waves.in_flight() or self.attempts.pending_launches:
            return
        self.state.handing_over()
        await self.recorder.sync()
        await workflow.wait_condition(workflow.all_handlers_finished)
        workflow.continue_as_new(self.request.model_copy(update={"continued": True}))
