"""How `npaflow status` shows a run that ended without its own cleanup, and what was reconciled.

A terminated or timed-out run never ran its code to the end, so its own status
still says `running` (and a run refused at start, for an input its code could not
read, has none); Temporal's execution status and the run's reconcile
workflow (worker/reconciler.py) say what really happened to it and its jobs.
"""

from __future__ import annotations

import asyncio
from typing import Any, NamedTuple

from pydantic import ValidationError
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowQueryFailedError,
)
from temporalio.service import RPCError, RPCStatusCode

from npaflow.cli.ledger_waves import with_ledger_waves
from npaflow.cli.status_query import queried_status
from npaflow.errors import UsageError
from npaflow.ids import RunId
from npaflow.runtime.contract import INTERNAL_ERROR_PREFIX, RECONCILED_QUERY
from npaflow.runtime.ledger import ReconciledJob
from npaflow.runtime.reconcile import ReconcileResult, reconcile_workflow_id
from npaflow.runtime.reconcile.shown import seen_ended, shown_update
from npaflow.runtime.status import FailureClass
from npaflow.runtime.summary import ReportedWave, RunStatusView, RunSummary, StatusReport
from npaflow.runtime.usage import gpu_hours_text
from npaflow.runtime.vocabulary import RunEnding, WaveStatus
from npaflow.temporal.client import has_pollers, started_request, summary_from_failure
from npaflow.temporal.errors import innermost_message

#: Execution statuses the run's own code never saw: its phase is Temporal's word.
ENDED_BEHIND = {
    WorkflowExecutionStatus.TERMINATED: RunEnding.TERMINATED,
    WorkflowExecutionStatus.TIMED_OUT: RunEnding.TIMED_OUT,
}
#: How long an ended run's status query may take to answer (its worker replays the history).
ENDED_QUERY_SECONDS = 20
#: Phases that say the run's code finished it (anything else was cut short).
_FINAL_PHASES = {"succeeded", "failed", "cancelled"}


async def add_ending(
    client: Client, status: WorkflowExecutionStatus | None, report: StatusReport
) -> StatusReport:
    """Correct the phase of a run that ended behind its code, and list the jobs reconciled."""
    if status is None or status is WorkflowExecutionStatus.RUNNING:
        return report
    ended = ENDED_BEHIND.get(status)
    if ended is None and report.phase in _FINAL_PHASES:
        return await _swept_after_cleanup(client, report)
    update: dict[str, object] = {"phase": ended.value if ended else report.phase, "current_states": []}
    if status is WorkflowExecutionStatus.FAILED:  # refused before its code ran: no summary, no phase
        update["phase"] = "failed"
    report = report.model_copy(update=update)
    reconciled = await read_reconciled(client, report.run_id)
    if reconciled.result is None:
        return report.model_copy(update={"reconciled_note": reconciled.note})
    return _with_reconciled(report, reconciled.result, reconciled.note)


async def _swept_after_cleanup(client: Client, report: StatusReport) -> StatusReport:
    """A run its own code ended: the jobs the orphan sweep cancelled after a cancel not seen to end them."""
    if not any(wave.status is WaveStatus.CANCELLED and wave.job_id for wave in report.waves):
        return report
    result = (await read_reconciled(client, report.run_id)).result
    if result is None or not result.acted():
        return report
    return _with_reconciled(report, result, seen_ended(report, result))


def _with_reconciled(report: StatusReport, result: ReconcileResult, note: str = "") -> StatusReport:
    """The report as the reconciler's write of the ledger says it: its jobs, attempts and hours."""
    cancelled = {job.job_id: job for job in result.jobs}
    shown = shown_update(report, result)
    shown["waves"] = [_reconciled(wave, cancelled.get(wave.job_id)) for wave in shown["waves"]]
    return report.model_copy(update={**shown, "reconciled": result.jobs, "reconciled_note": note})


class Reconciled(NamedTuple):
    """The run's reconcile workflow: what it did (None: nothing yet, or unreadable), and a note."""

    result: ReconcileResult | None
    note: str = ""
    settled: bool = False  # it has written the run's ledger or ended: nothing more will change


async def read_reconciled(client: Client, run_id: str) -> Reconciled:
    """What the run's reconcile workflow did: its result when it ended, else its query's answer."""
    handle = client.get_workflow_handle(reconcile_workflow_id(RunId(run_id)), result_type=ReconcileResult)
    try:
        description = await handle.describe()
    except RPCError as exc:
        if exc.status is not RPCStatusCode.NOT_FOUND:  # fail closed: unknown is never "none"
            return Reconciled(None, f"reconciling: not readable now ({exc.message[:200]})")
        return Reconciled(None, "no job of this run needed reconciling (yet: workers sweep every 20 s)")
    running = description.status is WorkflowExecutionStatus.RUNNING
    try:
        if running:
            result = await asyncio.wait_for(handle.query(RECONCILED_QUERY, result_type=ReconcileResult), 10)
        else:
            result = await handle.result()
    except (WorkflowFailureError, RPCError, WorkflowQueryFailedError, TimeoutError, ValidationError) as exc:
        return Reconciled(None, f"reconciling: not readable now ({type(exc).__name__})")  # never "none"
    return Reconciled(result, _reconciled_note(result, running), result.ledger is not None or not running)


def _reconciled_note(result: ReconcileResult, running: bool) -> str:
    """What the reconciler has done so far, when its list of cancelled jobs does not say it."""
    if result.jobs:
        return ""
    if result.ledger is not None:
        return "no job needed cancelling (each had ended); its ledger was closed from the jobs' own records"
    if running:
        return "reconciling: cancelling the run's jobs by exact id now"
    return "no job of this run needed reconciling"


class Ending(NamedTuple):
    """What the server keeps of an ended run: the summary's view, or why it failed without one."""

    view: RunStatusView | None = None
    failure: str = ""  # a run refused before its code ran (its input unreadable) says why only here


async def read_ending(client: Client, handle: WorkflowHandle[Any, Any]) -> Ending:
    """An ended run's status from the summary it ended with, kept by the server (one result read).

    The summary is the run's result, or its failure's details: no worker is needed, so a
    run pinned to a retired worker version still shows its waves. No view when it ended
    without one (cancelled, terminated, refused at start).
    """
    try:
        summary: RunSummary | None = RunSummary.model_validate(await handle.result())
    except WorkflowFailureError as error:
        summary = summary_from_failure(error)
        if summary is None:
            return Ending(failure=innermost_message(error))
    except RPCError as error:
        return Ending(failure=f"not readable now ({error.message})")
    except ValidationError:
        return Ending()
    if summary is None:
        return Ending()
    try:
        backend = (await started_request(client, handle)).backend
    except (RPCError, ValidationError, UsageError):
        return Ending()
    return Ending(view=await _every_wave(client, handle, summary.status_view(backend)))


async def _every_wave(client: Client, handle: WorkflowHandle[Any, Any], view: RunStatusView) -> RunStatusView:
    """The summary's view with every wave attempt, when its bounded result left some to the ledger.

    A worker reads them from the run's ledger in pages (when its last export failed, the
    closed run's status query answers instead, replaying it); without a worker, or when
    neither answers, the view keeps the newest attempts and says where they start
    (`waves_start`: the rest are in the ledger).
    """
    if view.waves_start == 0:
        return view
    try:
        task_queue = (await handle.describe()).task_queue or ""
        if not await has_pollers(client, task_queue, activities=True):
            return view
        if view.ledger_uri and not view.ledger_behind:
            return await with_ledger_waves(client, view, task_queue)
        queried = await queried_status(handle, ENDED_QUERY_SECONDS)
    except (RPCError, WorkflowQueryFailedError, WorkflowFailureError, TimeoutError):
        return view
    return view.model_copy(update={"waves": queried.waves, "waves_start": queried.waves_start})


def _reconciled(wave: ReportedWave, job: ReconciledJob | None) -> ReportedWave:
    if job is None:
        return wave
    sky_status = job.final_status or wave.sky_status
    return wave.model_copy(
        update={"status": WaveStatus.CANCELLED, "reconciled": True, "sky_status": sky_status}
    )


def next_steps(summary: RunSummary) -> list[str]:
    """After a failed run: what its failure class means, and the commands to read and retry it."""
    lines = []
    if summary.failure_class is not None:
        lines.append(f"why: {summary.failure_class.value}: {summary.failure_class.explain()}")
    if summary.error.startswith(INTERNAL_ERROR_PREFIX):
        lines.append(
            "next: this is a bug in npaflow's workflow code, not in your job: report it with the run id "
            "and the error above"
        )
        lines.append(
            f"      npaflow resume {summary.run_id}  (after a deploy with the fix; completed waves are "
            "not run again)"
        )
        return lines
    if summary.failure_class is FailureClass.BUDGET:  # its jobs were stopped by npaflow: no log to read
        spent = gpu_hours_text(summary.usage.gpu_hours)
        lines.append(
            f"next: npaflow resume {summary.run_id} --max-gpu-hours H  (H above the {spent} GPU-h spent; "
            "completed waves are not run again)"
        )
        return lines
    failed = [w for w in summary.waves if w.status is WaveStatus.FAILED and w.job_id]
    if failed:
        state = f" --state {failed[-1].states[0]}" if failed[-1].states else ""
        lines.append(f"next: npaflow logs {summary.run_id}{state}  (the failed job's log)")
        lines.append(
            f"      npaflow resume {summary.run_id}  (retries it; completed waves are not run again)"
        )
    else:
        lines.append(
            f"next: npaflow resume {summary.run_id}  (retries it; completed waves are not run again)"
        )
    return lines
