"""What a run's open activity calls say while they fail and retry: the run's own waits it cannot see.

A launch or an await that cannot reach its backend retries inside the activity
(its heartbeat carries the run of errors) or Temporal retries it (the attempt and
its last failure); the workflow learns of neither until the call ends. `npaflow
status` reads them from Temporal's description of the run and says, in words,
what the run is stuck on, instead of `running, no job yet` for minutes.
"""

from __future__ import annotations

from pydantic import BaseModel

from npaflow.presets import FROZEN
from npaflow.runtime.contract import AWAIT_WAVE, LAUNCH_WAVE

#: The calls a person knows by what they do, not by their activity names.
CALL_WORDS = {LAUNCH_WAVE.name: "the launch", AWAIT_WAVE.name: "the job's status"}
#: Characters of an error a line quotes (the ledger and the worker's log keep it whole).
MAX_ERROR_CHARS = 300


class PendingCall(BaseModel):
    """One activity call of the run still open, as Temporal and its heartbeat describe it."""

    model_config = FROZEN

    activity: str
    attempt: int = 1
    consecutive_errors: int = 0  # from its heartbeat: failed backend calls in a row
    errors_since: float = 0.0  # epoch seconds of the first of them
    last_error: str = ""
    last_failure: str = ""  # Temporal's: why the previous attempt failed

    def stalled(self, now: float) -> str:
        """`the launch: no answer for 45s (6 failed calls, retrying): ...`; "" while it goes well."""
        what = CALL_WORDS.get(self.activity, self.activity)
        if self.consecutive_errors and self.errors_since:
            seconds = max(0, round(now - self.errors_since))
            error = f": {self.last_error[:MAX_ERROR_CHARS]}" if self.last_error else ""
            return (
                f"{what} gets no answer from the backend for {seconds}s ({self.consecutive_errors} "
                f"failed calls; retried within the run's transport budget){error}"
            )
        if self.attempt > 1 and self.last_failure:
            return f"{what} is retried (attempt {self.attempt}) after: {self.last_failure[:MAX_ERROR_CHARS]}"
        return ""


def stall_lines(calls: list[PendingCall], now: float) -> list[str]:
    """One line per open call that is failing and retrying, in the order Temporal lists them."""
    return [line for line in (call.stalled(now) for call in calls) if line]
