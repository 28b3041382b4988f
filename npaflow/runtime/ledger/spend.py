"""One attempt's share of the run's hours, by state, from its clocked task rows (DESIGN 28)."""

from __future__ import annotations

from npaflow.runtime.ledger.attempt import TaskRow, WaveAttemptRecord
from npaflow.runtime.usage import attempt_hours, task_hours
from npaflow.runtime.vocabulary import WaveStatus

#: One state's share of one attempt: (state, GPU-hours, node-hours, spent on a failed attempt).
UsagePart = tuple[str, float, float, bool]


def attempt_usage(wave: WaveAttemptRecord, now: str = "") -> list[UsagePart]:
    """Each state's hours in one attempt; a running one counts up to `now` (else its newest observation)."""
    until = wave.ended_at or now or (wave.observations[-1].observed_at if wave.observations else "")
    failed = not wave.succeeded() and wave.status is not WaveStatus.RUNNING
    rows = wave.clocked_tasks()
    if not rows and wave.node_hours:  # a summary record: its hours, on its first state
        return [(wave.states[0] if wave.states else "", wave.gpu_hours, wave.node_hours, failed)]
    if failed and wave.items:
        return _member_usage(wave, rows, until)
    return [
        (state, gpu, node, failed)
        for state, (gpu, node) in attempt_hours(rows, wave.task_shapes, until).items()
    ]


def _member_usage(wave: WaveAttemptRecord, rows: list[TaskRow], until: str) -> list[UsagePart]:
    """A failed fan-out batch's hours, task by task, each failed only when its member failed.

    A member that succeeded beside failing ones spent its hours on a success: a retry
    carries it, a resume skips it.
    """
    kept, parts = wave.members_ran(), []
    for row in rows:
        if 0 <= row.task_id < len(wave.task_shapes):
            shape = wave.task_shapes[row.task_id]
            gpu, node = task_hours(row, shape, until)
            parts.append((shape.state, gpu, node, shape.task_name.rpartition("-")[2] not in kept))
    return parts
