"""A wave's attempts: the two retry budgets around one attempt's launch, await and settle.

`TemporalExecutor` is what the traversal drives (`Executor` in npaflow/traversal):
it replays and adopts what earlier executions did and retries within both
budgets. `AttemptRunner` (workflows_def/attempts.py) runs one attempt. The run's waits (pause, suspension,
continue-as-new) are workflows_def/run_gates.py, the decision and trigger reads
workflows_def/readings.py, cancelling by exact id workflows_def/cancellation.py.
Nothing calls back into the workflow object.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from npaflow.runtime.cache_messages import CacheLookupResult
from npaflow.runtime.ledger import WaveAttemptRecord, latest_attempts
from npaflow.runtime.metrics import BudgetLabel, Metric
from npaflow.runtime.status import RetryBudget
from npaflow.runtime.vocabulary import WaveStatus
from npaflow.traversal import DecisionRequest, TriggerRequest, Wave, WaveOutcome
from workflows_def.attempts import AttemptRunner
from workflows_def.cleanup import cleaned_up
from workflows_def.metrics import count
from workflows_def.outputs import (
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
        held = cache.unserved(wave) if cache else wave  # the GPUs of what launches
        return await self.leases.held(held, lambda: self._within_budgets(wave, attempt, reconcile, cache))

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


def _budget_label(budget: RetryBudget) -> BudgetLabel:
    return BudgetLabel.PAYLOAD if budget is RetryBudget.RETRIES else BudgetLabel.INFRASTRUCTURE
