"""A run's side of its GPU quota pool: each wave acquires its GPUs before it launches and gives them back.

One ask and one release per wave, by signal; the pool answers by signal. While
the wave waits it asks again every ASK_AGAIN, which refreshes its place in line
(what `npaflow status` and the Temporal UI show) and finds a pool that is gone:
fail closed, the wave does not launch and says why. A wave whose demand the
pool does not count (CPU only, another accelerator type) launches at once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import replace
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.exceptions import FailureError, is_cancelled_exception

from npaflow.quota import LeaseAnswer, LeaseRequest, QuotaClaim, SpentRelease
from npaflow.quota.leases import LeaseVerdict, lease_id
from npaflow.quota.messages import (
    ASK_SIGNAL,
    RELEASE_SIGNAL,
    RELEASE_SPENT_SIGNAL,
    pool_workflow_id,
)
from npaflow.runtime.gpu_demand import wave_accelerators
from npaflow.runtime.quota_waits import QuotaWait
from npaflow.traversal import Wave, WaveOutcome
from workflows_def.activity_calls import now
from workflows_def.cleanup import Cleanup, cleaned_up
from workflows_def.patches import (
    QUOTA_HELD_WHILE_UNVERIFIED,
    QUOTA_RELEASE_AFTER_CANCEL,
    QUOTA_SET_ASIDE,
    QUOTA_SPENT_RELEASE,
)
from workflows_def.run_deps import RunDeps
from workflows_def.wave_layers import Next, Suspend, WaveCall

#: How often a waiting wave asks again (its place in line refreshed, a vanished pool found).
ASK_AGAIN = timedelta(seconds=30)


class QuotaLeases:
    """Holds each wave's GPUs from the run's pool for as long as the wave runs."""

    def __init__(self, deps: RunDeps, claim: QuotaClaim) -> None:
        self.claim = claim
        self.state = deps.state
        self.answers = deps.mailbox.quota_answers
        self.after_jobs_cancelled = deps.after_jobs_cancelled
        self.holding: dict[str, LeaseRequest] = {}  # wave key -> the lease it holds now
        self.granted_at: dict[str, str] = {}  # wave key -> when its lease was granted

    async def around(self, call: WaveCall, next_: Next) -> WaveOutcome:
        """Hold the GPUs of what launches while the layers inside run; set them aside while suspended."""
        outer = call.suspend

        async def aside(why: str) -> str:
            return await self.set_aside(call.wave, outer, why)

        return await self.held(call.launching(), lambda: next_(replace(call, suspend=aside)))

    async def held(self, wave: Wave, body: Callable[[], Awaitable[WaveOutcome]]) -> WaveOutcome:
        """Run `body` while the wave holds its GPUs; a refused or unreachable pool fails the wave."""
        demand = wave_accelerators(wave.steps)
        if self.claim is None or not demand:
            return await body()
        claim = self.claim
        request = LeaseRequest(
            lease_id=lease_id(self.state.run_id, str(wave.key)),
            run_id=self.state.run_id,
            wave=str(wave.key),
            team=claim.team,
            priority=claim.priority,
            accelerators=demand,
        )
        return await cleaned_up(
            self._granted_then(claim.pool, request, body),
            lambda: self._give_back(claim.pool, request),
            deferred=lambda exc, give_back: self._after_jobs_cancelled(exc, str(wave.key), give_back),
        )

    def _after_jobs_cancelled(self, exc: BaseException, wave: str, give_back: Cleanup) -> bool:
        """A run ending mid-wave gives the wave's GPUs back once its cleanup cancelled the jobs holding them.

        Cancelled, or failing while the wave's job still runs (a spent budget, a bug): the
        run's cleanup (workflows_def/run/cancellation.py) cancels that job by id first.
        """
        granted = wave in self.holding  # a wave still waiting in line withdraws its ask at once
        running = any(str(record.key) == wave for record in self.state.waves.in_flight())
        if not granted or not (is_cancelled_exception(exc) or running):
            return False
        if not workflow.patched(QUOTA_RELEASE_AFTER_CANCEL):
            return False
        self.after_jobs_cancelled.append(lambda: self._held_or_given_back(wave, give_back))
        return True

    def _held_or_given_back(self, wave: str, give_back: Cleanup) -> Coroutine[Any, Any, None]:
        """Once the cleanup cancelled the wave's job: its GPUs go back, unless that cancel was not seen.

        Such a job may still run on them: the lease stays with the pool, which frees it once the
        closed run's ledger shows the job ended (the workers' sweeps write that: cancelled by id,
        or ended on its own).
        """
        attempts = [record for record in self.state.waves.records() if str(record.key) == wave]
        unverified = bool(attempts) and attempts[-1].cancel_unverified()
        if not unverified or not workflow.patched(QUOTA_HELD_WHILE_UNVERIFIED):  # marker only then
            return give_back()
        self.holding.pop(wave, None)
        self.granted_at.pop(wave, None)
        self.state.quota_settled(wave, now=now())
        return _held()

    async def _granted_then(
        self, pool: str, request: LeaseRequest, body: Callable[[], Awaitable[WaveOutcome]]
    ) -> WaveOutcome:
        problem = await self._acquire(pool, request)
        if problem:
            return WaveOutcome(succeeded=False, error=problem)
        self.holding[request.wave] = request
        return await body()

    def _give_back(self, pool: str, request: LeaseRequest) -> Coroutine[Any, Any, None]:
        """Settle the wave's wait at once; the release signal is the cleanup to finish."""
        self.holding.pop(request.wave, None)
        self.state.quota_settled(request.wave, now=now())
        return self._release(pool, request.lease_id, request.wave)

    async def set_aside(self, wave: Wave, wait: Suspend, why: str) -> str:
        """Give the wave's GPUs back while `wait(why)` runs, then ask again: "" once granted, else why not.

        A suspended run waits for `resume` for as long as its operator takes: its GPUs
        serve other runs meanwhile, and its wave queues again like any other.
        """
        request = self.holding.get(str(wave.key))
        if request is None or self.claim is None or not workflow.patched(QUOTA_SET_ASIDE):
            return await wait(why)
        await self._release(self.claim.pool, request.lease_id, str(wave.key))
        self.state.quota_settled(str(wave.key), now=now())
        problem = await wait(why) or await self._acquire(self.claim.pool, request)
        if problem:
            self.holding.pop(str(wave.key), None)
        return problem

    async def _acquire(self, pool: str, request: LeaseRequest) -> str:
        """Wait until granted; "" then, else why the wave cannot launch."""
        handle = workflow.get_external_workflow_handle(pool_workflow_id(pool))
        ask = True
        while True:
            if ask:
                try:
                    await handle.signal(ASK_SIGNAL, request)
                except FailureError:
                    return (
                        f"quota pool {pool} cannot be reached (it does not exist or was deleted), so wave "
                        f"{request.wave} does not launch: create it with `npaflow quota set {pool} --gpus N`"
                    )
            try:
                await workflow.wait_condition(lambda: request.lease_id in self.answers, timeout=ASK_AGAIN)
            except TimeoutError:
                ask = True  # ask again: a fresh place in line, and a pool that is gone is found
                continue
            answer = self.answers.pop(request.lease_id)
            match answer.verdict:
                case LeaseVerdict.REFUSED:
                    return f"quota pool {pool} refused wave {request.wave}: {answer.refused}"
                case LeaseVerdict.GRANTED:
                    self.state.quota_settled(request.wave, now=now(), granted=True)
                    self.granted_at[request.wave] = now()
                    return ""
                case LeaseVerdict.WAITING:
                    ask = False
                    self.state.quota_waiting(waiting(pool, request, answer))

    async def _release(self, pool: str, lease: str, wave: str) -> None:
        """Give the lease back, saying what the wave's attempts spent while it held it."""
        self.answers.pop(lease, None)
        granted = self.granted_at.pop(wave, None)
        handle = workflow.get_external_workflow_handle(pool_workflow_id(pool))
        try:
            if granted is not None and workflow.patched(QUOTA_SPENT_RELEASE):
                spent = SpentRelease(lease_id=lease, gpu_hours=self._spent(wave, granted))
                await handle.signal(RELEASE_SPENT_SIGNAL, spent)
            else:
                await handle.signal(RELEASE_SIGNAL, lease)
        except FailureError:
            pass  # the pool is gone: nothing is held there any more

    def _spent(self, wave: str, granted: str) -> float:
        """GPU-hours of the wave's attempts launched since the grant, on the ledger's one clock."""
        attempts = [r for r in self.state.waves.records() if str(r.key) == wave and r.started_at >= granted]
        return sum(record.with_hours(now()).gpu_hours for record in attempts)


def waiting(pool: str, request: LeaseRequest, answer: LeaseAnswer) -> QuotaWait:
    """The wave's wait as the pool's answer puts it (a new record; a refresh keeps its queued_at)."""
    at = now()
    return QuotaWait(
        id=f"{request.wave}@{at}",
        pool=pool,
        wave=request.wave,
        gpus=sum(request.accelerators.values()),
        position=answer.position,
        in_use=answer.in_use,
        capacity=answer.capacity,
        queued_at=at,
    )


async def _held() -> None:
    """Nothing to send: the pool keeps the lease until the run's ledger shows its job ended."""
