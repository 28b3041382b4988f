"""`NpaflowReconcileRun`: cancels, by exact id, the jobs of a run that ended without its cleanup.

Workers' sweeps (worker/reconciler.py) find live jobs whose run is closed and
signal-with-start this workflow under one id per run, so however many workers
find the same job, one workflow cancels it once: it keeps the jobs it has seen,
stays open a while for late signals, and skips what the ledger already records.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError

from npaflow.ids import RunId
from npaflow.runtime.contract import (
    CANCEL_WAVE,
    CHECK_RUN,
    RECONCILE_SIGNAL,
    RECONCILE_WORKFLOW_TYPE,
    RECONCILED_QUERY,
    RECORD_RECONCILED,
)
from npaflow.runtime.ledger import Cancellation, ReconciledJob
from npaflow.runtime.messages import CancelWaveInput
from npaflow.runtime.reconcile.models import (
    RECONCILE_ID_PREFIX,
    CheckRunInput,
    LedgerAfter,
    LedgerClosure,
    LedgerWritten,
    LiveJob,
    OrphanBatch,
    ReconcileResult,
    RecordReconciledInput,
    RunStanding,
    reconcile_workflow_id,
)
from npaflow.runtime.vocabulary import CancellationState, RunEnding
from workflows_def.activity_calls import SHORT_RETRY, call, classify_activity_error, now, queue_for
from workflows_def.input_refusal import MALFORMED_INPUT, refused

#: How long the workflow waits for more signals after its last job (other workers' sweeps).
LINGER = timedelta(seconds=30)
#: How long a cancel is polled to a terminal status before it counts as only `requested`.
VERIFY_SECONDS = 60.0
#: A local job's cancel waits this long for its worker (the only one that can reach it).
WORKER_WAIT = timedelta(minutes=5)


@workflow.defn(name=RECONCILE_WORKFLOW_TYPE, failure_exception_types=MALFORMED_INPUT)
class NpaflowReconcileRun:
    """One per run id: cancels each orphaned job once, verifies, and writes it into the ledger."""

    def __init__(self) -> None:
        self.waiting: list[LiveJob] = []
        self.seen: set[tuple[str, str]] = set()
        self.ending = RunEnding.TERMINATED
        self.done: list[ReconciledJob] = []
        self.closure: LedgerClosure | None = None  # a ledger the run left open, to close
        self.ledger: LedgerAfter | None = None  # what the run's ledger says since this wrote it

    @workflow.signal(name=RECONCILE_SIGNAL)
    def orphans(self, batch: OrphanBatch) -> None:
        """More orphans of this run, from a worker's sweep (already-seen jobs are dropped).

        A batch of another run (a hand-sent signal) is dropped: this workflow checks and
        cancels for its own run only.
        """
        own = workflow.info().workflow_id.removeprefix(RECONCILE_ID_PREFIX)
        if batch.run_id != own:
            workflow.logger.warning("reconcile: dropped a batch of run %s sent to run %s", batch.run_id, own)
            return
        self.ending = batch.ending
        if batch.closure is not None:
            self.closure = batch.closure
        for job in batch.jobs:
            key = (job.job.backend.value, job.job.job_id)
            if key not in self.seen:
                self.seen.add(key)
                self.waiting.append(job)

    @workflow.run
    async def run(self, batch: OrphanBatch) -> ReconcileResult:
        """Reconcile every job signalled until none has come for LINGER."""
        if workflow.info().workflow_id != reconcile_workflow_id(batch.run_id):
            raise refused(
                f"invalid OrphanBatch: run {batch.run_id} is reconciled under the workflow id "
                f"{reconcile_workflow_id(batch.run_id)!r}, not {workflow.info().workflow_id!r} "
                "(hint: workers start this workflow themselves; nothing needs to start it by hand)"
            )
        self.orphans(batch)
        while True:
            try:
                await workflow.wait_condition(
                    lambda: bool(self.waiting) or self.closure is not None, timeout=LINGER
                )
            except TimeoutError:
                break
            jobs, self.waiting = self.waiting, []
            if jobs:
                self.done.extend(await self._reconcile(batch.run_id, jobs))
            closure, self.closure = self.closure, None
            if closure is not None:
                await self._close(batch.run_id, closure)
        return ReconcileResult(run_id=batch.run_id, jobs=self.done, ledger=self.ledger)

    @workflow.query(name=RECONCILED_QUERY)
    def reconciled(self) -> ReconcileResult:
        """The jobs reconciled so far (the workflow stays open a while for late signals)."""
        run_id = workflow.info().workflow_id.removeprefix(RECONCILE_ID_PREFIX)
        return ReconcileResult(run_id=run_id, jobs=self.done, ledger=self.ledger)

    async def _reconcile(self, run_id: RunId, jobs: list[LiveJob]) -> list[ReconciledJob]:
        """Check the run is still closed, cancel what its cleanup did not keep, record it."""
        owner = next(job.owner for job in jobs if job.owner is not None)
        standing = await _still_closed(
            CheckRunInput(run_id=run_id, ledger_uri=owner.ledger_uri, job_ids=[j.job.job_id for j in jobs])
        )
        if standing.ending is RunEnding.OPEN:
            return []  # a new execution owns (or will adopt) them; unknown: never cancel
        results = await asyncio.gather(*(self._cancel(job, standing) for job in jobs))
        reconciled = [r for r in results if r is not None]
        if reconciled and owner.ledger_uri:
            record = RecordReconciledInput(
                run_id=run_id,
                ledger_uri=owner.ledger_uri,
                workflow=owner.workflow,
                ending=standing.ending,
                jobs=reconciled,
            )
            written = await _record(
                record, f"record {len(reconciled)} reconciled job(s) in the ledger of {run_id}"
            )
            self._learned(written.ledger)
        return reconciled

    async def _close(self, run_id: RunId, closure: LedgerClosure) -> None:
        """Close a ledger the run left open: its ended jobs as their records say, the run's end."""
        standing = await _still_closed(CheckRunInput(run_id=run_id))
        if standing.ending is RunEnding.OPEN:
            return  # a new execution owns the ledger now; unknown: leave it alone
        record = RecordReconciledInput(
            run_id=run_id,
            ledger_uri=closure.ledger_uri,
            workflow=closure.workflow,
            ending=standing.ending,
            ended=closure.ended,
            close=True,
        )
        written = await _record(record, f"close the ledger of {run_id} ({standing.ending.value})")
        self._learned(written.ledger)

    def _learned(self, after: LedgerAfter | None) -> None:
        """Keep what the ledger says since a write (an older worker's answer says nothing)."""
        if after is not None:
            self.ledger = after if self.ledger is None else self.ledger.then(after)

    async def _cancel(self, live: LiveJob, standing: RunStanding) -> ReconciledJob | None:
        """Cancel one job by exact id and verify it (None: its run left it running on purpose)."""
        job = live.job
        if job.job_id in standing.kept_job_ids or job.job_id in standing.reconciled_job_ids:
            return None
        owner = live.owner
        bound = {"schedule_to_start_timeout": WORKER_WAIT} if job.worker_task_queue else {}
        try:
            result = await call(
                CANCEL_WAVE,
                CancelWaveInput(job=job, verify_seconds=VERIFY_SECONDS),
                task_queue=queue_for(CANCEL_WAVE, job),
                start_to_close_timeout=timedelta(minutes=5),
                heartbeat_timeout=timedelta(seconds=30),
                retry_policy=SHORT_RETRY,
                summary=f"cancel orphaned job {job.job_id} ({job.job_name})",
                **bound,
            )
            cancellation = Cancellation(state=result.state, error=result.error)
            final = result.status if result.status.is_terminal() else None
        except ActivityError as error:
            _, message = classify_activity_error(error, job)
            cancellation, final = Cancellation(state=CancellationState.FAILED, error=message), None
        return ReconciledJob(
            job_id=job.job_id,
            job_name=job.job_name,
            backend=job.backend.value,
            wave_key=owner.wave_key if owner else "",
            attempt=owner.attempt if owner else 1,
            run_ending=standing.ending,
            cancellation=cancellation,
            final_status=final,
            at=now(),
        )


async def _still_closed(request: CheckRunInput) -> RunStanding:
    """How the run stands now (it may have been resumed since a sweep found it closed)."""
    return await call(
        CHECK_RUN,
        request,
        start_to_close_timeout=timedelta(minutes=1),
        retry_policy=SHORT_RETRY,
        summary=f"is run {request.run_id} still closed?",
    )


async def _record(request: RecordReconciledInput, summary: str) -> LedgerWritten:
    """Write what the reconciler did (or found) into the run's ledger; what it says now."""
    return await call(
        RECORD_RECONCILED,
        request,
        start_to_close_timeout=timedelta(minutes=2),
        retry_policy=SHORT_RETRY,
        summary=summary,
    )
