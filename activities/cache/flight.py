"""Joining a key's flight: signal-with-start its workflow, so the first run to ask holds it."""

from __future__ import annotations

from temporalio import activity

from npaflow.cli.temporal_client import helper_attributes
from npaflow.runtime.cache_messages import (
    FLIGHT_REQUEST_SIGNAL,
    FLIGHT_WORKFLOW_TYPE,
    RequestFlightInput,
)


async def request_flight(request: RequestFlightInput) -> None:
    """Ask for the key; the flight workflow answers the run with a signal when it is its turn."""
    await activity.client().start_workflow(
        FLIGHT_WORKFLOW_TYPE,
        request.ticket.key,
        id=request.flight_id,
        task_queue=request.task_queue,
        start_signal=FLIGHT_REQUEST_SIGNAL,
        start_signal_args=[request.ticket],
        search_attributes=helper_attributes(),  # out of the UI's run list
    )
