"""Telling people: a run that failed, is suspended or ran out of capacity (or succeeded, if asked).

An activity posts it to the workers' webhooks; how delivery went goes to the ledger.
Delivery never fails the run: the activity reports undelivered webhooks instead of
raising, and an activity that itself fails (no worker, timeout) is recorded the same way.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import is_cancelled_exception

from npaflow.runtime.contract import NOTIFY_RUN
from npaflow.runtime.notifications import (
    MAX_NOTIFIED_ERROR,
    NotificationRecord,
    NotificationResult,
    RunEvent,
    RunNotification,
    summary_text,
)
from npaflow.runtime.request import RunRequest
from npaflow.runtime.run_state import RunState
from workflows_def import patches
from workflows_def.activity_calls import ACTIVITY_FAILURES, call, classify_activity_error

#: A webhook answers within seconds or not at all; a lost worker gets one more try.
NOTIFY_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=2)


def notification(state: RunState, event: RunEvent) -> RunNotification:
    """What the webhooks receive, from the run as it stands."""
    failed = state.waves.last_failure() if event is not RunEvent.SUCCEEDED else None
    usage = state.progress.usage()
    note = RunNotification(
        event=event,
        text="",
        run_id=state.run_id,
        workflow=state.workflow,
        phase=state.phase.value,
        state=",".join(failed.states) if failed else "",
        wave_key=str(failed.key) if failed else "",
        failure_class=state.failure_class.value if state.failure_class else "",
        error=(state.error or (failed.error if failed else ""))[:MAX_NOTIFIED_ERROR],
        gpu_hours=usage.gpu_hours,
        node_hours=usage.node_hours,
        ledger_uri=state.ledger_uri,
        at=workflow.now().strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
    return note.model_copy(update={"text": summary_text(note)})


async def notify(state: RunState, request: RunRequest, event: RunEvent) -> bool:
    """Post `event` if the run asked for it; True when a delivery was recorded for the ledger."""
    if not event.wanted(request.notify) or not patches.has(patches.NOTIFICATIONS):
        return False
    note = notification(state, event)
    try:
        result = await call(
            NOTIFY_RUN,
            note,
            start_to_close_timeout=timedelta(seconds=30),
            schedule_to_close_timeout=timedelta(minutes=2),
            retry_policy=NOTIFY_RETRY,
            summary=f"notify {event.value}",
        )
    except ACTIVITY_FAILURES as error:
        if is_cancelled_exception(error):
            raise
        _, message = classify_activity_error(error)
        result = NotificationResult(webhooks=1, errors=[f"not sent: {message}"[:300]])
    if not result.webhooks:
        return False  # no webhook configured on the worker: nothing to record
    state.add_notification(
        NotificationRecord(
            id=f"{event.value}@{note.at}",
            event=event,
            at=note.at,
            webhooks=result.webhooks,
            delivered=result.delivered,
            errors=result.errors,
        )
    )
    return True
