"""Heartbeats for polling activities: typed details that a retried attempt resumes from."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from temporalio import activity


@dataclass
class PollState:
    """What a poller heartbeats: the exact job, how long it has waited, what it last saw."""

    job_id: str
    started_at: float
    polls: int = 0
    last_status: str = "SUBMITTED"
    consecutive_errors: int = 0
    max_concurrent: int = 0


def resume_poll_state(job_id: str, now: float) -> PollState:
    """Resume from the last heartbeat of an earlier attempt for the same job, else start fresh.

    The deadline therefore survives worker crashes: `started_at` is the first attempt's.
    """
    details = activity.info().heartbeat_details
    if details:
        raw = details[0]
        if isinstance(raw, dict) and raw.get("job_id") == job_id:
            known = {k: raw[k] for k in PollState.__dataclass_fields__ if k in raw}
            return PollState(**known)
    return PollState(job_id=job_id, started_at=now)


def heartbeat_poll(state: PollState) -> None:
    """Send the poll state (throttled by the SDK; the first beat goes out at once)."""
    activity.heartbeat(asdict(state))
