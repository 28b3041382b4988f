"""Run notifications: which events a run reports, what the webhook receives, what the ledger keeps.

The webhook URLs live only in the worker's environment (`NPAFLOW_NOTIFY_URL`):
nothing here carries one, so a chat webhook's secret never enters workflow
input, history, the ledger or logs. The ledger records each delivery by webhook
number ("webhook 1 of 2"), never by URL.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from npaflow.ids import RunId
from npaflow.presets import FROZEN

#: Characters of a run's error a notification carries.
MAX_NOTIFIED_ERROR = 2000


class NotifyWhen(StrEnum):
    """`submit --notify`: which run outcomes are posted to the worker's webhooks."""

    FAILURES = "failures"  # failed, suspended, capacity exhausted
    ALWAYS = "always"  # those, and success
    NEVER = "never"


class RunEvent(StrEnum):
    """What happened to the run."""

    FAILED = "run_failed"
    SUSPENDED = "run_suspended"
    CAPACITY = "run_capacity_exhausted"
    SUCCEEDED = "run_succeeded"

    def wanted(self, when: NotifyWhen) -> bool:
        """True when a run asking for `when` reports this event."""
        if when is NotifyWhen.NEVER:
            return False
        return when is NotifyWhen.ALWAYS or self is not RunEvent.SUCCEEDED


class RunNotification(BaseModel):
    """The JSON body posted to each webhook (`text` makes Slack-style webhooks show a line)."""

    model_config = FROZEN

    event: RunEvent
    text: str
    run_id: RunId
    workflow: str
    phase: str
    state: str = ""  # the state whose wave failed (suspended, failed, capacity)
    wave_key: str = ""
    failure_class: str = ""
    error: str = Field(default="", max_length=MAX_NOTIFIED_ERROR)
    gpu_hours: float = 0.0
    node_hours: float = 0.0
    ledger_uri: str = ""
    ui_url: str = ""  # filled in by the worker when NPAFLOW_UI_URL is set
    at: str = ""  # when the event happened (workflow time, UTC ISO-8601)


class NotificationResult(BaseModel):
    """How delivery went, per webhook (numbered, never named by URL)."""

    model_config = FROZEN

    webhooks: int = 0  # how many the worker has configured
    delivered: int = 0
    errors: list[str] = Field(default_factory=list)  # "webhook 2 of 2: HTTP 500"


class NotificationRecord(BaseModel):
    """One notification in the ledger (`runtime.json` `notifications`)."""

    model_config = FROZEN

    id: str  # unique within the run: the event and when it happened
    event: RunEvent
    at: str
    webhooks: int = 0
    delivered: int = 0
    errors: list[str] = Field(default_factory=list)


def summary_text(note: RunNotification) -> str:
    """One human line: `run X (spec) failed at state S [class]: error`."""
    verb = {
        RunEvent.FAILED: "failed",
        RunEvent.SUSPENDED: "is suspended, waiting for resume",
        RunEvent.CAPACITY: "ran out of capacity",
        RunEvent.SUCCEEDED: "succeeded",
    }[note.event]
    where = f" at state {note.state}" if note.state else ""
    category = f" [{note.failure_class}]" if note.failure_class else ""
    error = f": {note.error[:300]}" if note.error else ""
    return f"npaflow run {note.run_id} ({note.workflow}) {verb}{where}{category}{error}"
