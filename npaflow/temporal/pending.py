"""A run's open activity calls, read once from Temporal's description of it.

`live_view` merges each await's heartbeat into the run's status (a running job's
backend word, its tasks' starts) and `status` says which calls keep failing: both
read the same decoded heartbeats from here.
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog
from temporalio.client import WorkflowExecutionDescription

from npaflow.runtime.contract import AWAIT_WAVE, LAUNCH_WAVE
from npaflow.runtime.messages import HeartbeatDetails
from npaflow.runtime.stalls import PendingCall
from npaflow.temporal.data_converter import DATA_CONVERTER

log = structlog.get_logger(__name__)

#: The calls a person knows by what they do, not by their activity names.
CALL_WORDS = {LAUNCH_WAVE.name: "the launch", AWAIT_WAVE.name: "the job's status"}


@dataclass(frozen=True)
class OpenActivity:
    """One pending activity of the run, its heartbeat decoded once."""

    name: str
    attempt: int
    last_failure: str  # Temporal's: why the previous attempt failed ("" for the first)
    details: HeartbeatDetails | None  # None: no heartbeat yet, or one this build cannot read


async def open_activities(description: WorkflowExecutionDescription) -> list[OpenActivity]:
    """Each pending activity with its attempt, last failure and decoded heartbeat."""
    found = []
    for pending in description.raw_description.pending_activities:
        details = None
        if pending.heartbeat_details.payloads:
            try:
                (raw, *_) = await DATA_CONVERTER.decode(pending.heartbeat_details.payloads)
                details = HeartbeatDetails.model_validate(raw)
            except Exception as exc:  # noqa: BLE001 - another build's details: the call is still listed
                log.debug("status.heartbeat_unread", activity=pending.activity_type.name, error=str(exc))
        failure = pending.last_failure.message if pending.HasField("last_failure") else ""
        found.append(OpenActivity(pending.activity_type.name, pending.attempt, failure, details))
    return found


def pending_calls(activities: list[OpenActivity]) -> list[PendingCall]:
    """The calls as `npaflow/runtime/stalls.py` reads them: what each does, and its run of errors."""
    calls = []
    for opened in activities:
        details = opened.details or HeartbeatDetails()
        calls.append(
            PendingCall(
                call=CALL_WORDS.get(opened.name, opened.name),
                attempt=opened.attempt,
                consecutive_errors=details.consecutive_errors,
                errors_since=details.errors_since,
                last_error=details.last_error,
                last_failure=opened.last_failure,
            )
        )
    return calls


def polled_jobs(activities: list[OpenActivity]) -> dict[str, HeartbeatDetails]:
    """Each job's await heartbeat (awaits that have polled at least once), by job id."""
    return {
        opened.details.job_id: opened.details
        for opened in activities
        if opened.name == AWAIT_WAVE.name
        and opened.details is not None
        and opened.details.job_id
        and opened.details.polls
    }
