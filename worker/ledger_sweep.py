"""The ledger sweep: closes the ledger of a run that closed without its code (DESIGN §3.5).

A run terminated from the Temporal UI, timed out, or failed by a bug never
writes its own end. When its job outlives it, the orphan sweep
(worker/reconciler.py) cancels the job and closes the ledger; when the job
ends on its own first, no live job is left to find, so this sweep asks
Temporal's visibility for closed runs whose phase never reached an end, reads
each one's ledger, and when it is still open hands the run to its reconcile
workflow with what each in-flight attempt's job says of itself. A run closed
before its first export has no ledger: its launch receipts name the jobs it
launched, and once every launch its history scheduled left one, the ledger is
written from them (none scheduled: a run that launched nothing). A GPU quota
pool frees the run's GPUs once its ledger shows every job ended.

A run whose own cleanup cancelled a job without seeing it end (its memo counts
`unverified_cancels`) is followed too: once the job has ended, on its own or by a
late cancel, its attempt is clocked to the job's own end, so every hour it ran is
counted (while it runs, the orphan sweep cancels it and clocks it to that cancel).

Fail closed: a run Temporal cannot describe, a ledger that cannot be read, a
job whose record cannot be read, or a job that is still live, leaves the
ledger alone until a later sweep (the orphan sweep cancels live jobs).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import structlog
from temporalio.client import Client, WorkflowExecution, WorkflowHandle
from temporalio.common import SearchAttributeKey
from temporalio.service import RPCError

from activities.backends.base import Backend
from activities.context import ActivityContext
from activities.launch_receipts import run_receipts
from activities.ledger import read_ledger
from npaflow.errors import NpaflowError
from npaflow.ids import RunId
from npaflow.runtime.contract import LAUNCH_WAVE, WORKFLOW_TYPE, RunMemo, SearchAttribute
from npaflow.runtime.ledger import LaunchReceipt, WaveAttemptRecord
from npaflow.runtime.reconcile import (
    EndedJob,
    LedgerClosure,
    OrphanBatch,
    cancelled_unverified,
    in_flight,
    left_open,
)
from npaflow.runtime.status import JobStatus, aggregate_job_status
from npaflow.runtime.vocabulary import RunEnding, RunPhase
from npaflow.temporal.client import started_request
from npaflow.temporal.run_standing import standing_of
from worker.reconcile_handoff import hand_to_reconciler
from workflows_def.activity_calls import LAUNCH_TIMEOUT

log = structlog.get_logger(__name__)

#: How far back a worker's first sweep looks (what closed while no worker ran).
START_LOOKBACK = timedelta(days=7)
#: Later sweeps look this far behind the previous one's start: visibility can lag its writes.
OVERLAP = timedelta(minutes=5)
#: Execution statuses that skip a run's own code (a bug's failure included).
_CLOSED_WITHOUT_CODE = ("Terminated", "TimedOut", "Failed")
#: Phases a run's own ending never leaves behind.
_UNENDED_PHASES = tuple(phase.value for phase in RunPhase if not phase.is_final())
#: Endings whose cleanup cancels jobs (and may not see a cancel take).
_CLEANED_UP_PHASES = (RunPhase.CANCELLED.value, RunPhase.FAILED.value)
_SPEC = SearchAttributeKey.for_keyword(SearchAttribute.WORKFLOW.value)
_PHASE = SearchAttributeKey.for_keyword(SearchAttribute.PHASE.value)


class Unsettled(Exception):
    """This run's ledger cannot be closed by this sweep now; a later sweep tries again."""


class LedgerSweep:
    """One worker's sweep over runs closed without their code whose ledger is still open."""

    def __init__(self, client: Client, context: ActivityContext) -> None:
        self.client = client
        self.context = context
        self.since: datetime | None = None
        self.settled: set[tuple[str, str]] = set()  # (run id, execution) checked for good

    def query(self, since: datetime) -> str:
        """The visibility query: this queue's runs closed since `since` without their code, or cleaned up."""
        statuses = ", ".join(f"'{status}'" for status in _CLOSED_WITHOUT_CODE)
        phases = ", ".join(f"'{phase}'" for phase in _UNENDED_PHASES)
        cleaned = ", ".join(f"'{phase}'" for phase in _CLEANED_UP_PHASES)
        phase = SearchAttribute.PHASE.value
        return (
            f"WorkflowType = '{WORKFLOW_TYPE}' AND TaskQueue = '{self.context.task_queue}' "
            f"AND CloseTime > '{since.strftime('%Y-%m-%dT%H:%M:%SZ')}' "
            f"AND ((ExecutionStatus IN ({statuses}) AND {phase} IN ({phases})) OR {phase} IN ({cleaned}))"
        )

    async def sweep(self) -> int:
        """One pass; returns how many ledgers it handed to reconcile workflows to close."""
        started = datetime.now(UTC)
        since = self.since - OVERLAP if self.since else started - START_LOOKBACK
        earliest_unsettled: datetime | None = None
        handed, listed = 0, set()
        async for execution in self.client.list_workflows(self.query(since)):
            key = (execution.id, execution.run_id)
            listed.add(key)
            if key in self.settled:
                continue
            try:
                handed += await self._close(execution)
            except (Unsettled, NpaflowError, RPCError) as exc:
                log.info("reconcile.ledger_unsettled", run_id=execution.id, detail=str(exc)[:300])
                closed = execution.close_time or started
                earliest_unsettled = min(closed, earliest_unsettled or closed)
                continue
            self.settled.add(key)
        self.settled &= listed  # the window only moves on: what it no longer lists never comes back
        self.since = min(started, earliest_unsettled + OVERLAP) if earliest_unsettled else started
        return handed

    async def _close(self, execution: WorkflowExecution) -> int:
        """Hand one run's open ledger to its reconciler (1), or settle it as needing nothing (0)."""
        run_id = RunId(execution.id)
        memo = RunMemo.read(await execution.memo())
        cleaned_up = execution.typed_search_attributes.get(_PHASE) in _CLEANED_UP_PHASES
        if cleaned_up and not memo.unverified_cancels:
            return 0  # its cleanup saw every job it cancelled end
        newest = await self.client.get_workflow_handle(run_id).describe()
        if newest.run_id != execution.run_id:
            return 0  # a newer execution owns the ledger (or is listed itself when closed)
        standing = standing_of(newest.status)
        if standing.ending is RunEnding.OPEN or not memo.ledger_uri:
            return 0
        ledger_uri = memo.ledger_uri
        closure = await (
            self._unverified(execution, ledger_uri) if cleaned_up else self._closure(execution, ledger_uri)
        )
        if closure is None:
            return 0
        batch = OrphanBatch(run_id=run_id, ending=standing.ending, closure=closure)
        await hand_to_reconciler(self.client, self.context, batch)
        jobs = len(closure.ended)
        log.warning("reconcile.ledger_closing", run_id=run_id, ending=standing.ending.value, jobs=jobs)
        return 1

    async def _closure(self, execution: WorkflowExecution, ledger_uri: str) -> LedgerClosure | None:
        """What closes the run's open ledger (None: nothing to close, or nothing can say how).

        Its in-flight jobs' own records; for a run closed before its first export, the
        jobs its launch receipts name, once every launch its history scheduled left one
        (none scheduled: it launched nothing).
        """
        ledger = await read_ledger(self.context.storage, ledger_uri)
        if ledger is not None and not left_open(ledger):
            return None
        handle = self.client.get_workflow_handle(execution.id, run_id=execution.run_id)
        if ledger is None:
            receipts = await self._receipts(ledger_uri)
            if not await every_launch_receipted(execution, handle, len(receipts)):
                return None
            workflow = execution.typed_search_attributes.get(_SPEC) or ""
            backend = self.context.backend((await started_request(self.client, handle)).backend)
            ended = [await self._receipt_job(backend, receipt) for receipt in receipts]
            return LedgerClosure(ledger_uri=ledger_uri, workflow=workflow, ended=ended)
        backend = self.context.backend((await started_request(self.client, handle)).backend)
        ended = [await self._ended(backend, wave) for wave in in_flight(ledger) if wave.job_id]
        return LedgerClosure(ledger_uri=ledger_uri, workflow=ledger.workflow, ended=ended)

    async def _unverified(self, execution: WorkflowExecution, ledger_uri: str) -> LedgerClosure | None:
        """The jobs a run's cleanup cancelled without seeing them end, once each has ended (None: none left).

        An attempt the orphan sweep's cancel has since verified is no longer unverified.
        """
        ledger = await read_ledger(self.context.storage, ledger_uri)
        pending = cancelled_unverified(ledger) if ledger else []
        if ledger is None or not pending:
            return None
        handle = self.client.get_workflow_handle(execution.id, run_id=execution.run_id)
        backend = self.context.backend((await started_request(self.client, handle)).backend)
        ended = [await self._ended(backend, wave) for wave in pending]
        return LedgerClosure(ledger_uri=ledger_uri, workflow=ledger.workflow, ended=ended)

    async def _ended(self, backend: Backend, wave: WaveAttemptRecord) -> EndedJob:
        """What an in-flight attempt's job says of itself, once it has ended.

        Raises:
            Unsettled: the job lives on another worker's host, or still runs.
        """
        if wave.worker_task_queue and wave.worker_id != self.context.worker_id:
            raise Unsettled(f"job {wave.job_id} lives on worker {wave.worker_id}'s host")
        return await _job_ended(backend, wave.job_id)

    async def _receipts(self, ledger_uri: str) -> list[LaunchReceipt]:
        """The run's launch receipts (Unsettled when one cannot be read: never "none")."""
        try:
            return await run_receipts(self.context.storage, ledger_uri)
        except (ValueError, OSError) as exc:
            raise Unsettled(f"a launch receipt of {ledger_uri} could not be read: {exc}") from None

    async def _receipt_job(self, backend: Backend, receipt: LaunchReceipt) -> EndedJob:
        """The ended job a launch receipt names, with the attempt it ran (the ledger never named it).

        Raises:
            Unsettled: the job lives on another worker's host, still runs, or is not found (yet).
        """
        if backend.host_bound and receipt.worker_id != self.context.worker_id:
            raise Unsettled(f"job {receipt.job_name} lives on worker {receipt.worker_id}'s host")
        matches = await backend.find_jobs(receipt.job_name)
        found = [match for match in matches if match.launch_token == receipt.launch_token]
        if len(found) != 1:
            raise Unsettled(f"launch request {receipt.request_id} names {len(found)} jobs, not one")
        ended = await _job_ended(backend, found[0].job_id)
        update = {"wave_key": receipt.wave_key, "attempt": receipt.attempt, "job_name": receipt.job_name}
        return ended.model_copy(update=update)


async def _job_ended(backend: Backend, job_id: str) -> EndedJob:
    """What a job says of itself, once it has ended.

    Raises:
        Unsettled: the job still runs (the orphan sweep cancels it).
    """
    rows = (await backend.queue([job_id])).get(job_id, [])
    if not rows:  # absence is evidence only when a second answer agrees
        rows = (await backend.queue([job_id])).get(job_id, [])
    status = aggregate_job_status([row.status for row in rows])
    if not status.is_terminal() and status is not JobStatus.ABSENT:
        raise Unsettled(f"job {job_id} is {status.value}: the orphan sweep cancels it")
    return EndedJob(job_id=job_id, status=status, tasks=rows)


async def every_launch_receipted(
    execution: WorkflowExecution, handle: WorkflowHandle[Any, Any], receipts: int
) -> bool:
    """True when each launch the run's history scheduled left its receipt (or none was).

    False past the launch's own timeout with one still missing: nothing here can say
    what that launch did (fail closed: a pool keeps the run's GPUs for an operator).

    Raises:
        Unsettled: a launch's receipt may still come.
    """
    scheduled = 0
    async for event in handle.fetch_history_events():
        attributes = event.activity_task_scheduled_event_attributes
        if event.HasField("activity_task_scheduled_event_attributes") and (
            attributes.activity_type.name == LAUNCH_WAVE.name
        ):
            scheduled += 1
    if scheduled <= receipts:
        return True
    closed = execution.close_time or datetime.now(UTC)
    if datetime.now(UTC) - closed < LAUNCH_TIMEOUT + OVERLAP:
        raise Unsettled(f"{scheduled - receipts} launch(es) scheduled without a receipt yet")
    return False
