"""The reconciler's activities: how a run stands in Temporal, and its reconciled jobs in the ledger.

A run that ends without its own cleanup (terminated, timed out, failed by a
bug) leaves its jobs running; the workers' sweep (worker/reconciler.py) finds
them and the reconcile workflow cancels them by exact id, then records them
here. Fail closed: when Temporal cannot say whether a run is open, it is open.
"""

from __future__ import annotations

import structlog
from temporalio import activity

from activities.clock import utc_now
from activities.errors import mapped_errors
from activities.ledger import LedgerActivities, read_ledger
from npaflow.document.models import SUPPORTED_API_VERSIONS
from npaflow.runtime.contract import CHECK_RUN, RECORD_RECONCILED, RunMemo
from npaflow.runtime.ledger import LedgerDelta, RuntimeLedger, WaveAttemptRecord
from npaflow.runtime.messages import ExportLedgerInput
from npaflow.runtime.metrics import Metric, record
from npaflow.runtime.reconcile.ledger_change import kept_on_purpose, reconciled_delta, unended_jobs
from npaflow.runtime.reconcile.models import (
    CheckRunInput,
    LedgerWritten,
    RecordReconciledInput,
    RunStanding,
)
from npaflow.runtime.reconcile.shown import ledger_after
from npaflow.runtime.reconcile.uncounted import added_hours, uncounted_hours
from npaflow.runtime.usage import Usage
from npaflow.runtime.vocabulary import CancellationState, RunEnding
from npaflow.temporal.run_standing import chain_started_at, run_standing

log = structlog.get_logger(__name__)


class ReconcileActivities:
    """Activities of the reconcile workflow, sharing the worker's ledger writer."""

    def __init__(self, ledger: LedgerActivities) -> None:
        self.ledger = ledger

    @activity.defn(name=CHECK_RUN.name)
    @mapped_errors
    async def check_run(self, request: CheckRunInput) -> RunStanding:
        """How the run stands now, and which of the given jobs its cleanup kept on purpose."""
        standing = await run_standing(activity.client(), request.run_id)
        if request.verify_jobs and standing.known and standing.ending is not RunEnding.OPEN:
            standing = await self._verified(request, standing)
        if not request.ledger_uri or not request.job_ids or standing.ending is RunEnding.OPEN:
            return standing
        stored = await read_ledger(self.ledger.storage, request.ledger_uri)
        kept = [job_id for job_id in request.job_ids if kept_on_purpose(stored, job_id)]
        done = [
            job.job_id
            for job in (stored.reconciled if stored else [])
            if job.cancellation.state is CancellationState.VERIFIED
        ]
        return standing.model_copy(update={"kept_job_ids": kept, "reconciled_job_ids": done})

    async def _verified(self, request: CheckRunInput, standing: RunStanding) -> RunStanding:
        """The standing with what the closed run's ledger still holds in flight (unread: fail closed)."""
        uri = request.ledger_uri
        if not uri and standing.ending is not RunEnding.GONE:
            description = await activity.client().get_workflow_handle(request.run_id).describe()
            uri = RunMemo.read(await description.memo()).ledger_uri
        stored = await read_ledger(self.ledger.storage, uri) if uri else None
        if stored is None:
            return standing
        return standing.model_copy(update={"ledger_read": True, "live_jobs": unended_jobs(stored)})

    @activity.defn(name=RECORD_RECONCILED.name)
    @mapped_errors
    async def record_reconciled(self, request: RecordReconciledInput) -> LedgerWritten:
        """Write each reconciled job into its run's ledger: its attempt cancelled, the run ended.

        The answer says what the ledger now holds of those attempts, and the run's hours,
        for the views of a run whose own answer still counts them as running.
        """
        export = ExportLedgerInput(
            run_id=request.run_id,
            workflow=request.workflow,
            api_version=SUPPORTED_API_VERSIONS[0],
            ledger_uri=request.ledger_uri,
            delta=LedgerDelta(),
        )
        deltas: list[LedgerDelta] = []
        counted: list[WaveAttemptRecord] = []  # attempts the run ended, clocked again (a cancel unverified)

        def amend(stored: RuntimeLedger) -> LedgerDelta:
            deltas.append(reconciled_delta(stored, request, now=utc_now()))
            changed = {(wave.key, wave.attempt) for wave in deltas[-1].waves}
            counted[:] = [w for w in stored.waves if (w.key, w.attempt) in changed and w.cancel_unverified()]
            return deltas[-1]

        written, merged = await self.ledger.merge_reading(export, amend)
        after = ledger_after(merged, deltas[-1].waves if deltas else [])
        result = LedgerWritten(runtime_state_uri=written.runtime_state_uri, ledger=after)
        if deltas and deltas[-1].status is not None:  # this write ended the run: count what its code did not
            await self._count_hours(request, merged)
        elif counted:
            self._count(merged.workflow, added_hours(counted, deltas[-1].waves))
        for job in request.jobs:
            if not job.skipped:
                record(Metric.JOBS_RECONCILED, backend=job.backend, ending=request.ending.value)
        log.warning("run.jobs_reconciled", run_id=request.run_id, jobs=[j.job_id for j in request.jobs])
        return result

    async def _count_hours(self, request: RecordReconciledInput, merged: RuntimeLedger) -> None:
        """The hours the run's last chain of executions added, in the metrics its code never reached.

        Once per run ending: only the write that ends the ledger's run counts. When Temporal
        cannot say when the chain began, nothing is counted (never an hour twice).
        """
        since = await chain_started_at(activity.client(), request.run_id)
        if not since:
            log.warning("run.hours_not_counted", run_id=request.run_id, why="chain start unknown")
            return
        self._count(merged.workflow, uncounted_hours(merged, since))

    @staticmethod
    def _count(spec: str, hours: dict[str, Usage]) -> None:
        for state, usage in hours.items():
            record(Metric.GPU_HOURS, usage.gpu_hours, spec=spec, state=state)
            record(Metric.NODE_HOURS, usage.node_hours, spec=spec, state=state)
