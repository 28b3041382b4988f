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

#: Characters of an error a line quotes (the ledger and the worker's log keep it whole).
MAX_ERROR_CHARS = 300


class Stall(BaseModel):
    """One open call that keeps failing: the sentence `status` says, and `list`'s few words."""

    model_config = FROZEN

    call: str  # `the launch`: what is stalled (said once when it begins, not each second)
    text: str
    short: str  # `the backend (the launch: no answer for 45s)`: what `list` says the run waits for


class PendingCall(BaseModel):
    """One activity call of the run still open, as Temporal and its heartbeat describe it."""

    model_config = FROZEN

    call: str  # what the call does, in words (`the launch`; npaflow/temporal/pending.py names it)
    attempt: int = 1
    consecutive_errors: int = 0  # from its heartbeat: failed backend calls in a row
    errors_since: float = 0.0  # epoch seconds of the first of them
    last_error: str = ""
    last_failure: str = ""  # Temporal's: why the previous attempt failed

    def stalled(self, now: float) -> Stall | None:
        """`the launch gets no answer from the backend for 45s (...): ...`; None while it goes well."""
        what = self.call
        if self.consecutive_errors and self.errors_since:
            seconds = max(0, round(now - self.errors_since))
            error = f": {self.last_error[:MAX_ERROR_CHARS]}" if self.last_error else ""
            text = (
                f"{what} gets no answer from the backend for {seconds}s ({self.consecutive_errors} "
                f"failed calls; retried within the run's transport budget){error}"
            )
            return Stall(call=what, text=text, short=f"the backend ({what}: no answer for {seconds}s)")
        if self.attempt > 1 and self.last_failure:
            text = f"{what} is retried (attempt {self.attempt}) after: {self.last_failure[:MAX_ERROR_CHARS]}"
            return Stall(call=what, text=text, short=f"{what} to succeed (attempt {self.attempt})")
        return None


def stall_lines(calls: list[PendingCall], now: float) -> list[Stall]:
    """Each open call that is failing and retrying, in the order Temporal lists them."""
    return [stall for stall in (call.stalled(now) for call in calls) if stall is not None]
