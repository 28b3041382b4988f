"""What an await keeps of the job it polls: a bounded list of changes, and each task's start.

Only changes are recorded (a new status of some task, a new recovery reason),
and only the newest MAX_OBSERVATIONS, so a long wait never grows the history.
"""

from __future__ import annotations

from npaflow.runtime.ledger import Observation, TaskRow
from npaflow.runtime.status import JobStatus

#: Observations kept per wave attempt; only changes are recorded, so this bounds history size.
MAX_OBSERVATIONS = 100
#: Task starts a heartbeat carries (a JobGroup wider than this reports its first tasks).
MAX_TASK_STARTS = 200


def record_observation(
    observations: list[Observation], rows: list[TaskRow], status: JobStatus, now: str
) -> list[str]:
    """Append what changed since the last observation (if anything); return the running tasks."""
    statuses = {row.task_name or str(row.task_id): row.status for row in rows}
    recovering = {
        row.task_name or str(row.task_id): row.recovery_reason for row in rows if row.recovery_reason
    }
    running = sorted(row.task_name for row in rows if row.status.is_active())
    last = observations[-1] if observations else None
    if last is None or (last.statuses, last.recovering) != (statuses, recovering):
        observations.append(
            Observation(
                observed_at=now,
                scheduler_state=status,
                running=running,
                running_count=len(running),
                statuses=statuses,
                recovering=recovering,
            )
        )
        del observations[:-MAX_OBSERVATIONS]
    return running


def task_starts(rows: list[TaskRow]) -> dict[str, str]:
    """When each task started, by task id (the first MAX_TASK_STARTS tasks of a JobGroup)."""
    return {str(row.task_id): row.start_at for row in rows[:MAX_TASK_STARTS] if row.start_at}
