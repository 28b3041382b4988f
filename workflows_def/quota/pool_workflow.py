"""`NpaflowQuotaPool`: one per GPU pool; waves acquire GPUs before they launch and give them back after.

The pool's state lives here, in Temporal (DESIGN 21): durable across worker and
server restarts, visible by query. A run's wave asks by signal and is answered
by signal (granted, its place in line, or refused when it could never fit); it
asks again every ASK_AGAIN while it waits, which also refreshes its place. A
lease whose run has closed without giving it back (terminated, timed out) is
found by a check every LIVENESS: its place in line goes at once, but GPUs it
holds come back only once the run's ledger shows every job ended (cancelled by
the orphan sweep, or ended by itself) — never by a timer alone — or when an
operator releases them (`npaflow quota release POOL RUN`). The pool continues as new when
Temporal suggests, carrying its leases and fair-share ledger; it ends only when
`quota delete` asks and nothing holds or waits.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import FailureError

from npaflow.ids import RunId
from npaflow.quota import (
    Lease,
    LeaseAnswer,
    LeaseRequest,
    PoolBook,
    PoolCarry,
    PoolConfig,
    PoolStatus,
    ReleaseAnswer,
    ReleaseRun,
    SpentRelease,
    accelerator_problem,
)
from npaflow.quota.leases import LeaseId, lease_run
from npaflow.quota.messages import (
    ANSWER_SIGNAL,
    ASK_SIGNAL,
    CONFIGURE_UPDATE,
    DELETE_UPDATE,
    POOL_PREFIX,
    POOL_WORKFLOW_TYPE,
    RELEASE_RUN_UPDATE,
    RELEASE_SIGNAL,
    RELEASE_SPENT_SIGNAL,
    STATUS_QUERY,
)
from npaflow.runtime.contract import CHECK_RUN
from npaflow.runtime.metrics import Metric
from npaflow.runtime.reconcile.models import CheckRunInput, RunStanding
from npaflow.runtime.vocabulary import RunEnding
from workflows_def.activity_calls import ACTIVITY_FAILURES, SHORT_RETRY, call
from workflows_def.input_refusal import carried_state, continued_as_new
from workflows_def.metrics import count
from workflows_def.patches import ONE_ANSWER_PER_WAVE, VERIFIED_RECLAIM

#: How often the runs holding or waiting are checked; a vanished run's GPUs come back within it.
LIVENESS = timedelta(seconds=15)


@workflow.defn(name=POOL_WORKFLOW_TYPE)
class NpaflowQuotaPool:
    """Grants GPUs by priority, then weighted fair share, then first come first served."""

    def __init__(self) -> None:
        self.book = PoolBook(PoolCarry(config=PoolConfig(gpus=0)))
        self.asks: list[LeaseRequest] = []
        self.releases: list[LeaseId] = []
        self.spent: list[SpentRelease] = []  # releases that say what their attempts spent
        self.answers: list[LeaseAnswer] = []
        self.deleting = False

    def _now(self) -> float:
        return workflow.now().timestamp()

    @workflow.update(name=CONFIGURE_UPDATE)
    def configure(self, config: PoolConfig) -> PoolStatus:
        """`quota set`: capacity, accelerator type, team weights; grants what now fits."""
        self.book.configure(config)
        self.deleting = False
        self._grant()
        return self.status()

    @configure.validator
    def _refuse_a_config_that_limits_nothing(self, config: PoolConfig) -> None:
        """An accelerator no wave names (`H100:8`) is refused before it is recorded."""
        if problem := accelerator_problem(config.accelerator):
            raise ValueError(problem)

    @workflow.update(name=DELETE_UPDATE)
    def delete(self) -> str:
        """`quota delete`: "" when the pool ends now, else why it cannot."""
        if self.book.leases():
            held, waiting = len(self.book.holders), len(self.book.waiting)
            return f"{held} waves hold GPUs and {waiting} wait; delete the pool once they are done"
        self.deleting = True
        return ""

    @workflow.signal(name=ASK_SIGNAL)
    def ask(self, request: LeaseRequest) -> None:
        """A wave asks for its GPUs (answered by ANSWER_SIGNAL to its run)."""
        self.asks.append(request)

    @workflow.signal(name=RELEASE_SIGNAL)
    def release(self, lease_id: str) -> None:
        """A wave is done with its GPUs, or no longer waits for them."""
        self.releases.append(LeaseId(lease_id))

    @workflow.update(name=RELEASE_RUN_UPDATE)
    async def release_run(self, request: ReleaseRun) -> ReleaseAnswer:
        """`quota release`: a closed run's leases, once its jobs ended (or with `force`)."""
        leases = [lease for lease in self.book.leases() if lease.request.run_id == request.run_id]
        if not leases:
            return ReleaseAnswer(refused=f"run {request.run_id} holds and waits for nothing in this pool")
        standing = await self._standing(request.run_id)
        if standing is None or not standing.known:
            return ReleaseAnswer(
                refused=f"Temporal cannot say whether run {request.run_id} is open; try again"
            )
        if standing.ending is RunEnding.OPEN:
            return ReleaseAnswer(
                refused=f"run {request.run_id} is still running: cancel it (npaflow cancel "
                f"{request.run_id}) and its GPUs come back as it ends"
            )
        live = standing.live_jobs if standing.ledger_read else ["(its ledger could not be read)"]
        if live and not request.force:
            return ReleaseAnswer(live_jobs=live, refused="its jobs may still run")
        dropped = self.book.drop_runs({request.run_id}, self._now())
        self._grant()
        return ReleaseAnswer(released=[lease.request.wave for lease in dropped], live_jobs=live)

    @workflow.signal(name=RELEASE_SPENT_SIGNAL)
    def release_spent(self, release: SpentRelease) -> None:
        """A wave is done with its GPUs: its team is charged what its attempts spent."""
        self.spent.append(release)

    @workflow.query(name=STATUS_QUERY)
    def status(self) -> PoolStatus:
        """Capacity, use by team, holders, and waiters in the order they will be served."""
        return self.book.status(self._pool(), deleting=self.deleting)

    def _pool(self) -> str:
        return workflow.info().workflow_id.removeprefix(POOL_PREFIX)

    def _grant(self) -> None:
        """Grant what fits now; each granted wave's run is told (and its wait measured)."""
        self._tell(self.book.grant(self._now()))

    def _tell(self, granted: list[Lease]) -> None:
        for lease in granted:
            self.answers.append(self.book.answer(lease.request.lease_id))
            waited = max(0.0, lease.since - lease.asked_at)
            count(Metric.QUOTA_WAIT_SECONDS, waited, pool=self._pool(), team=lease.request.team)

    @workflow.run
    async def run(self, carried: object = None) -> None:
        """Serve asks and releases until deleted, checking the runs that hold or wait every LIVENESS.

        `carried`: a PoolCarry, read here (see input_refusal).
        """
        book = carried_state(carried, PoolCarry, continued=continued_as_new())
        if book is not None:
            self.book = PoolBook(book)
        while not self.deleting:
            await self._settle()
            if workflow.info().is_continue_as_new_suggested() and workflow.all_handlers_finished():
                workflow.continue_as_new(args=[self.book.carry()])
            try:
                await workflow.wait_condition(self._has_work, timeout=LIVENESS)
            except TimeoutError:
                await self._reclaim()

    def _has_work(self) -> bool:
        return bool(self.asks or self.releases or self.spent or self.answers or self.deleting)

    async def _settle(self) -> None:
        """Releases, then asks, then grants; each wave is sent one answer: its newest.

        Signals sent together may arrive in any order, so a wave asked and granted in
        one settle is not sent "waiting" beside "granted".
        """
        now = self._now()
        if workflow.patched(ONE_ANSWER_PER_WAVE):
            granted, asked = self.book.settle(self.releases, self.asks, now, self.spent)
            self.releases.clear()
            self.spent.clear()
            self.asks.clear()
            self._tell(granted)
            self.answers.extend(asked)
            answers = list({answer.lease_id: answer for answer in self.answers}.values())
        else:  # pools started before the patch: grants made while asking went untold
            released = bool(self.releases or self.spent)
            for lease_id in self.releases:
                self.book.release(lease_id, now)
            for spent in self.spent:
                self.book.release(spent.lease_id, now, spent.gpu_hours)
            self.releases.clear()
            self.spent.clear()
            self.answers.extend(self.book.ask(request, now) for request in self.asks)
            self.asks.clear()
            if released:
                self._grant()
            answers = self.answers
        self.answers = []
        await asyncio.gather(*(self._send(answer) for answer in answers))

    async def _send(self, answer: LeaseAnswer) -> None:
        """Tell the run; a run that is gone gives its lease back."""
        run_id = self._run_of(answer.lease_id)
        try:
            await workflow.get_external_workflow_handle(run_id).signal(ANSWER_SIGNAL, answer)
        except FailureError:
            self.releases.append(answer.lease_id)

    def _run_of(self, lease_id: str) -> str:
        for lease in self.book.leases():
            if lease.request.lease_id == lease_id:
                return lease.request.run_id
        return lease_run(lease_id)

    async def _reclaim(self) -> None:
        """Check every run holding or waiting; a closed run's place goes, its GPUs once its jobs ended."""
        runs = sorted(self.book.runs())
        verified = workflow.patched(VERIFIED_RECLAIM)
        standings = await asyncio.gather(*(self._standing(run, verify=verified) for run in runs))
        closed = {
            run
            for run, standing in zip(runs, standings, strict=True)
            if standing is not None and standing.known and standing.ending is not RunEnding.OPEN
        }
        if not closed:
            return
        if verified:
            ended = {run for run, s in zip(runs, standings, strict=True) if s is not None and s.jobs_ended()}
            self.book.drop_runs(closed - ended, self._now(), holders=False)
            self.book.drop_runs(ended, self._now())
        else:  # pools from before the patch reclaimed by the run's end alone (their histories replay so)
            self.book.drop_runs(closed, self._now())
        self._grant()

    async def _standing(self, run_id: str, *, verify: bool = True) -> RunStanding | None:
        """How the run stands (with `verify`, what its ledger holds in flight); None when unknown."""
        try:
            return await call(
                CHECK_RUN,
                CheckRunInput(run_id=RunId(run_id), verify_jobs=verify),
                start_to_close_timeout=timedelta(seconds=30),
                retry_policy=SHORT_RETRY,
                summary=f"is {run_id} still running?",
            )
        except ACTIVITY_FAILURES:
            return None  # unknown is not "gone": keep its lease
