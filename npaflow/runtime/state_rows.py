"""Each state's newest attempt, as the Temporal UI's table shows it (one row per state, not per wave)."""

from __future__ import annotations

from pydantic import BaseModel

from npaflow.presets import FROZEN
from npaflow.runtime.progress import RunProgress
from npaflow.runtime.vocabulary import WaveStatus


class StateRow(BaseModel):
    """One state in the Temporal UI's table: its newest attempt."""

    model_config = FROZEN

    state: str
    status: WaveStatus
    attempt: int
    job_id: str = ""
    gpu_hours: float = 0.0
    cached: bool = False


def state_rows(progress: RunProgress) -> list[StateRow]:
    """Each state's newest attempt, in the order states first ran (costs the states, not the waves)."""
    hours = progress.state_hours()
    return [
        StateRow(
            state=name,
            status=record.status,
            attempt=record.attempt,
            job_id=record.job_id,
            gpu_hours=round(hours[name].gpu_hours, 4) if name in hours else 0.0,
            cached=any(c.hit for c in record.cache if c.state == name),
        )
        for name, record in progress.latest.items()
    ]
