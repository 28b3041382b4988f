"""How a run's newest execution stands, as Temporal says: open, or how it ended.

One reading of Temporal's execution statuses for the reconciler's activities, the
workers' sweeps and `npaflow quota status`. Fail closed: a run Temporal cannot
describe, or a status not known here, is open (never "closed").
"""

from __future__ import annotations

from datetime import UTC

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from npaflow.ids import RunId
from npaflow.runtime.reconcile.models import RunStanding
from npaflow.runtime.timestamps import TIMESTAMP_FORMAT
from npaflow.runtime.vocabulary import RunEnding

_ENDINGS = {
    WorkflowExecutionStatus.RUNNING: RunEnding.OPEN,
    WorkflowExecutionStatus.CONTINUED_AS_NEW: RunEnding.OPEN,  # its successor is the newest
    WorkflowExecutionStatus.COMPLETED: RunEnding.SUCCEEDED,
    WorkflowExecutionStatus.FAILED: RunEnding.FAILED,
    WorkflowExecutionStatus.CANCELED: RunEnding.CANCELLED,
    WorkflowExecutionStatus.TERMINATED: RunEnding.TERMINATED,
    WorkflowExecutionStatus.TIMED_OUT: RunEnding.TIMED_OUT,
}


async def run_standing(client: Client, run_id: RunId) -> RunStanding:
    """How the newest execution of a run stands; unknown (never "closed") when Temporal cannot say."""
    try:
        description = await client.get_workflow_handle(run_id).describe()
    except RPCError as exc:
        if exc.status is RPCStatusCode.NOT_FOUND:
            return RunStanding(ending=RunEnding.GONE, detail="Temporal has no such run")
        return RunStanding(ending=RunEnding.OPEN, known=False, detail=f"describe failed: {exc}"[:300])
    return standing_of(description.status)


def standing_of(status: WorkflowExecutionStatus | None) -> RunStanding:
    """A run's standing from its newest execution's status (unknown statuses count as open)."""
    ending = _ENDINGS.get(status) if status else None
    if ending is None:
        return RunStanding(ending=RunEnding.OPEN, known=False, detail=f"status {status}")
    return RunStanding(ending=ending)


async def chain_started_at(client: Client, run_id: RunId) -> str:
    """When the run's newest chain of executions began (continue-as-new keeps a chain; a resume starts one).

    "" when Temporal cannot say.
    """
    try:
        description = await client.get_workflow_handle(run_id).describe()
        first = description.raw_description.workflow_execution_info.first_run_id
        if first and first != description.run_id:
            description = await client.get_workflow_handle(run_id, run_id=first).describe()
    except RPCError:
        return ""
    return description.start_time.astimezone(UTC).strftime(TIMESTAMP_FORMAT)
