"""Joining and leaving a key's flight: signal-with-start its workflow, so the first run to ask holds it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import structlog
from temporalio import activity
from temporalio.client import WithStartWorkflowOperation, WorkflowQueryFailedError, WorkflowQueryRejectedError
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.service import RPCError, RPCStatusCode

from npaflow.cache import scope_segment
from npaflow.runtime.cache.messages import (
    FLIGHT_ASK_UPDATE,
    FLIGHT_HOLDER_QUERY,
    FLIGHT_RELEASE_SIGNAL,
    FLIGHT_WORKFLOW_TYPE,
    FlightAnswer,
    FlightTicket,
    RequestFlightInput,
    flight_id,
)
from npaflow.temporal.helper_runs import COORDINATOR_VERSIONING, helper_attributes

log = structlog.get_logger(__name__)
#: How long the ask waits to learn the holder's name (the answer is only shown, never acted on).
HOLDER_QUERY_TIMEOUT = timedelta(seconds=5)


async def request_flight(request: RequestFlightInput) -> FlightAnswer:
    """Ask for the key (update-with-start): held now, or a signal grants it later (and who holds it)."""
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
        FLIGHT_ASK_UPDATE,
        request.ticket,
        start_workflow_operation=start,
        result_type=bool,
    )
    if holding:
        return FlightAnswer(holding=True)
    return FlightAnswer(holding=False, holder=await _holder(request))


async def _holder(request: RequestFlightInput) -> str:
    """The run holding the key, for the waiting run to name ("" when the flight cannot say now).

    Only what `status` shows depends on it: the wait itself is the flight's grant signal.
    """
    handle = activity.client().get_workflow_handle(request.flight_id)
    try:
        line = await handle.query(
            FLIGHT_HOLDER_QUERY, result_type=list[str], rpc_timeout=HOLDER_QUERY_TIMEOUT
        )
    except (RPCError, WorkflowQueryFailedError, WorkflowQueryRejectedError) as error:
        log.info("cache.flight_holder_unknown", flight=request.flight_id, error=str(error)[:200])
        return ""
    holder = line[0] if line else ""
    return holder if holder != request.ticket.run_id else ""


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
