"""Joining and leaving a key's flight: signal-with-start its workflow, so the first run to ask holds it."""

from __future__ import annotations

from typing import Any

from temporalio import activity
from temporalio.client import WithStartWorkflowOperation
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.service import RPCError, RPCStatusCode

from npaflow.cache import scope_segment
from npaflow.runtime.cache.messages import (
    FLIGHT_ASK_UPDATE,
    FLIGHT_RELEASE_SIGNAL,
    FLIGHT_WORKFLOW_TYPE,
    FlightTicket,
    RequestFlightInput,
    flight_id,
)
from npaflow.temporal.helper_runs import COORDINATOR_VERSIONING, helper_attributes


async def request_flight(request: RequestFlightInput) -> bool:
    """Ask for the key (update-with-start): True when the run holds it now, else a signal grants it later."""
    start: WithStartWorkflowOperation[Any, None] = WithStartWorkflowOperation(
        FLIGHT_WORKFLOW_TYPE,
        request.ticket.key,
        id=request.flight_id,
        task_queue=request.task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        search_attributes=helper_attributes(),  # out of the UI's run list
        versioning_override=COORDINATOR_VERSIONING,
    )
    holding = await activity.client().execute_update_with_start_workflow(
        FLIGHT_ASK_UPDATE, request.ticket, start_workflow_operation=start, result_type=bool
    )
    return bool(holding)


async def release_flights(run_id: str, scope: str, keys: list[str]) -> None:
    """Give the keys back (a flight that already ended holds nothing: not an error)."""
    client = activity.client()
    for key in keys:
        handle = client.get_workflow_handle(flight_id(scope_segment(scope), key))
        try:
            await handle.signal(FLIGHT_RELEASE_SIGNAL, FlightTicket(run_id=run_id, key=key))
        except RPCError as error:
            if error.status is not RPCStatusCode.NOT_FOUND:
                raise
