"""One attempt's share of the run's hours, by state, from its clocked task rows (DESIGN 28)."""

from __future__ import annotations

from npaflow.runtime.ledger.attempt import WaveAttemptRecord
from npaflow.runtime.usage import attempt_hours
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
    return [
        (state, gpu, node, failed)
        for state, (gpu, node) in attempt_hours(rows, wave.task_shapes, until).items()
    ]
