"""A wave's attempts: the two retry budgets around one attempt's launch, await and settle.

`TemporalExecutor` is what the traversal drives (`Executor` in npaflow/traversal):
it replays and adopts what earlier executions did, passes each wave through the
run's wave layers (workflows_def/wave_layers.py: the stage cache, the quota pool,
built once per run and only when used), and retries within both budgets.
`AttemptRunner` (workflows_def/run/attempts.py) runs one attempt. The run's waits (pause, suspension,
continue-as-new) are workflows_def/run/gates.py, the decision and trigger reads
workflows_def/run/readings.py, cancelling by exact id workflows_def/run/cancellation.py.
Nothing calls back into the workflow object.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from npaflow.fanout import ItemsRead, ItemsRequest, MembersOutcome
from npaflow.runtime.ledger import WaveAttemptRecord, latest_attempts
from npaflow.runtime.metrics import BudgetLabel, Metric
from npaflow.runtime.status import RetryBudget
from npaflow.runtime.vocabulary import WaveStatus
from npaflow.traversal import DecisionRequest, TriggerRequest, Wave, WaveOutcome
from workflows_def.cache.layer import StageCache
from workflows_def.fanout.layer import FanOutMembers
from workflows_def.fanout.member_attempts import failed_members
from workflows_def.fanout.reads import FanOutReads
from workflows_def.metrics import count
from workflows_def.patches import ADOPT_UNVERIFIED_CANCEL
from workflows_def.quota.layer import QuotaLeases
from workflows_def.run.attempts import AttemptRunner
from workflows_def.run.gates import RunGates
from workflows_def.run.outputs import (
    missing_outputs,
)
from workflows_def.run.readings import ArtifactReads
from workflows_def.run_deps import RunDeps
from workflows_def.wave_layers import WaveCall, WaveLayer, caches_a_state, fans_out, pool_claim, through


class TemporalExecutor:
    """Runs waves within both retry budgets; replays and adopts what earlier executions did."""

    def __init__(self, deps: RunDeps) -> None:
        self.deps, self.request, self.state = deps, deps.request, deps.state
        self.fan_out_reads: FanOutReads | None = None
        self.reads = ArtifactReads(deps)
        self.attempts = AttemptRunner(deps)
        self.gates = RunGates(deps, self.attempts.pending_launches)
        self.prior = latest_attempts(deps.loaded.prior.latest())
        for ended in deps.loaded.prior.ended:  # shown from the start, where the walk reaches them or not
            self.state.waves.recalled(ended)
        self.through_layers = through(wave_layers(deps), self._within_budgets)

    async def read_decision(self, request: DecisionRequest) -> str:
        """The decision artifact's value (npaflow/traversal's Executor protocol)."""
        return await self.reads.read_decision(request)

    async def assume_decision(self, request: DecisionRequest) -> str:
        """The assumption standing in for a decision."""
        return await self.reads.assume_decision(request)

    async def wait_trigger(self, request: TriggerRequest) -> None:
        """Wait for a trigger's prefix."""
        await self.reads.wait_trigger(request)

    async def read_items(self, request: ItemsRequest) -> ItemsRead:
        """A fan-out group's list (workflows_def/fanout/: built only for a spec that fans out)."""
        return await self._fan_out().read_items(request)

    async def still_done(self, group: str, outputs: dict[str, list[str]]) -> set[str]:
        """The finished members whose outputs are all still there (a resume relaunches the others)."""
        return await self._fan_out().still_done(group, outputs)

    async def record_members(self, members: MembersOutcome, read: ItemsRead, *, ended: bool) -> None:
        """How a fan-out's members stand: `members.json` and the ledger's record."""
        await self._fan_out().record_members(members, read, ended=ended)

    def members_progressed(self, fan_out: str, succeeded: int, failing: int) -> None:
        """A running fan-out's counts so far: status and the page show them (no command records them)."""
        self.state.fan_out_progressed(fan_out, succeeded, failing)

    def _fan_out(self) -> FanOutReads:
        if self.fan_out_reads is None:
            self.fan_out_reads = FanOutReads(self.deps)
        return self.fan_out_reads

    async def run_wave(self, wave: Wave) -> WaveOutcome:
        """Replay, adopt, or launch the wave; retry within budgets; suspend if asked to."""
        await self.gates.continue_as_new_if_suggested(wave.key.sequence)
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
        return await self._attempts(wave, attempt)

    async def _resume_from(self, wave: Wave, prior: WaveAttemptRecord) -> WaveOutcome | None:
        """The wave's outcome from what an earlier execution did, or None: attempt it (again)."""
        if prior.status is WaveStatus.SUCCEEDED:
            trusted = self.request.continued  # our own earlier execution just checked them
            outputs = [a.uri for a in prior.outputs]
            if trusted or not await missing_outputs(self.request, prior.key, outputs):
                self.state.waves.replayed(prior)
                return WaveOutcome(succeeded=True)
        elif prior.status is WaveStatus.RUNNING or _may_still_run(prior):
            if not prior.job_id:
                return None  # reconciled as the same attempt
            self.state.waves.adopted(prior)
            outcome = await self.attempts.await_job(prior.key, prior.attempt)
            return WaveOutcome(succeeded=True) if outcome.ok else None
        if prior.status.is_final() and prior.key.sequence < self.request.handed_over_at:
            # This run's own earlier execution moved past it (a fan-out batch that failed
            # within minSuccess): it stays failed, as one execution would have left it.
            failed = failed_members(wave, [prior]) if wave.fan_out is not None else ()
            return WaveOutcome(succeeded=False, error=prior.error, failed_items=failed)
        return None

    async def _attempts(self, wave: Wave, attempt: int, *, reconcile: bool = False) -> WaveOutcome:
        """Through the run's wave layers (the stage cache, the quota pool) to the attempts."""
        return await self.through_layers(WaveCall(wave, attempt, self._suspend, reconcile=reconcile))

    async def _suspend(self, why: str) -> str:
        await self.gates.suspend(why)
        return ""

    async def _within_budgets(self, call: WaveCall) -> WaveOutcome:
        """The wave's attempts within both retry budgets, a new one after each failure they allow."""
        wave, attempt, reconcile = call.wave, call.attempt, call.reconcile
        budgets = {
            RetryBudget.RETRIES: self.request.retries,
            RetryBudget.INFRASTRUCTURE: self.request.max_infrastructure_recoveries,
        }
        failures = 0
        while True:
            outcome = await self.attempts.run(wave, attempt, reconcile=reconcile, cache=call.cache)
            if outcome.ok:
                if call.succeeded is not None:
                    await call.succeeded(attempt)
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
                problem = await call.suspend(outcome.error)
                if problem:
                    return WaveOutcome(succeeded=False, error=problem)
            else:
                return WaveOutcome(succeeded=False, error=outcome.error)
            attempt += 1


def wave_layers(deps: RunDeps) -> list[WaveLayer]:
    """The run's wave features, outermost first: only those its request and spec use.

    Decided here from the request and the spec, so a plain run never enters a
    feature's room: no cache layer without a cached state and a cache root, no
    quota layer without a pool (the run's own `quota`, or the workers').
    """
    layers: list[WaveLayer] = []
    if caches_a_state(deps.request, deps.loaded):
        layers.append(StageCache(deps))
    if (claim := pool_claim(deps.request, deps.loaded)) is not None:
        layers.append(QuotaLeases(deps, claim))
    if fans_out(deps.loaded):
        layers.append(FanOutMembers(deps))
    return layers


def _budget_label(budget: RetryBudget) -> BudgetLabel:
    return BudgetLabel.PAYLOAD if budget is RetryBudget.RETRIES else BudgetLabel.INFRASTRUCTURE


def _may_still_run(prior: WaveAttemptRecord) -> bool:
    """An earlier execution cancelled its job without seeing it end: poll it, never launch beside it."""
    return prior.cancel_unverified() and bool(prior.job_id) and workflow.patched(ADOPT_UNVERIFIED_CANCEL)
