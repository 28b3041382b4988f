"""A run's open activity calls, read from Temporal's description of it (for `npaflow status`)."""

from __future__ import annotations

import structlog
from temporalio.client import WorkflowExecutionDescription

from npaflow.runtime.contract import AWAIT_WAVE, LAUNCH_WAVE
from npaflow.runtime.messages import HeartbeatDetails
from npaflow.runtime.stalls import PendingCall
from npaflow.temporal.data_converter import DATA_CONVERTER

log = structlog.get_logger(__name__)

#: The calls a person knows by what they do, not by their activity names.
CALL_WORDS = {LAUNCH_WAVE.name: "the launch", AWAIT_WAVE.name: "the job's status"}


async def pending_calls(description: WorkflowExecutionDescription) -> list[PendingCall]:
    """Each pending activity with its attempt, last failure and heartbeat's run of errors."""
    calls = []
    for pending in description.raw_description.pending_activities:
        details = HeartbeatDetails()
        if pending.heartbeat_details.payloads:
            try:
                (raw, *_) = await DATA_CONVERTER.decode(pending.heartbeat_details.payloads)
                details = HeartbeatDetails.model_validate(raw)
            except Exception as exc:  # noqa: BLE001 - another build's details: the call is still listed
                log.debug("status.heartbeat_unread", activity=pending.activity_type.name, error=str(exc))
        calls.append(
            PendingCall(
                call=CALL_WORDS.get(pending.activity_type.name, pending.activity_type.name),
                attempt=pending.attempt,
                consecutive_errors=details.consecutive_errors,
                errors_since=details.errors_since,
                last_error=details.last_error,
                last_failure=pending.last_failure.message if pending.HasField("last_failure") else "",
            )
        )
    return calls
