"""How `npaflow status` shows a run that ended without its own cleanup, and what was reconciled.

A terminated or timed-out run never ran its code to the end, so its own status
still says `running`; Temporal's execution status and the run's reconcile
workflow (worker/reconciler.py) say what really happened to it and its jobs.
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError, WorkflowQueryFailedError
from temporalio.service import RPCError

from npaflow.runtime.contract import RECONCILED_QUERY
from npaflow.runtime.reconcile import ReconcileResult, reconcile_workflow_id
from npaflow.runtime.summary import RunSummary
from npaflow.runtime.vocabulary import WaveStatus

#: Execution statuses the run's own code never saw: its phase is Temporal's word.
_ENDED_BEHIND = {
    WorkflowExecutionStatus.TERMINATED: "terminated",
    WorkflowExecutionStatus.TIMED_OUT: "timed_out",
}
#: Phases that say the run's code finished it (anything else was cut short).
_FINAL_PHASES = {"succeeded", "failed", "cancelled"}


async def add_ending(client: Client, status: WorkflowExecutionStatus | None, payload: dict[str, Any]) -> None:
    """Correct the phase of a run that ended behind its code, and list the jobs reconciled."""
    if status is None or status is WorkflowExecutionStatus.RUNNING:
        return
    ended = _ENDED_BEHIND.get(status)
    if ended is None and payload.get("phase") in _FINAL_PHASES:
        return
    payload["phase"] = ended or payload.get("phase", "unknown")
    payload["current_states"] = []  # nothing runs in an ended run
    handle = client.get_workflow_handle(reconcile_workflow_id(payload["run_id"]), result_type=ReconcileResult)
    try:
        description = await handle.describe()
    except RPCError:
        payload["reconciled_note"] = "no job of this run needed reconciling (yet: workers sweep every 20 s)"
        return
    try:
        if description.status is WorkflowExecutionStatus.RUNNING:
            result = await asyncio.wait_for(handle.query(RECONCILED_QUERY, result_type=ReconcileResult), 10)
        else:
            result = await handle.result()
    except (WorkflowFailureError, RPCError, WorkflowQueryFailedError, TimeoutError) as exc:
        payload["reconciled_note"] = f"reconciling: not readable now ({type(exc).__name__})"
        return
    if not result.jobs:
        payload["reconciled_note"] = "reconciling: cancelling the run's jobs by exact id now"
    jobs = [job.model_dump(mode="json") for job in result.jobs]
    payload["reconciled"] = jobs
    cancelled = {job["job_id"]: job for job in jobs}
    for wave in payload.get("waves", []):
        job = cancelled.get(wave.get("job_id"))
        if job is not None:
            wave["status"] = "cancelled (reconciled)"
            wave["sky_status"] = job.get("final_status") or wave.get("sky_status")


def next_steps(summary: RunSummary) -> list[str]:
    """After a failed run: what its failure class means, and the commands to read and retry it."""
    lines = []
    if summary.failure_class is not None:
        lines.append(f"why: {summary.failure_class.value}: {summary.failure_class.explain()}")
    failed = [w for w in summary.waves if w.status is WaveStatus.FAILED]
    state = f" --state {failed[-1].states[0]}" if failed and failed[-1].states else ""
    lines.append(f"next: npaflow logs {summary.run_id}{state}  (the failed job's log)")
    lines.append(f"      npaflow resume {summary.run_id}  (retries it; completed waves are not run again)")
    return lines
