"""Each state's newest attempt, as the Temporal UI's table shows it (one row per state, not per wave)."""

from __future__ import annotations

from itertools import islice

from pydantic import BaseModel

from npaflow.presets import FROZEN
from npaflow.runtime.ledger import WaveAttemptRecord
from npaflow.runtime.progress import RunProgress
from npaflow.runtime.usage import Usage
from npaflow.runtime.vocabulary import WaveStatus


class StateRow(BaseModel):
    """One state in the Temporal UI's table: its newest attempt."""

    model_config = FROZEN

    state: str
    status: WaveStatus
    attempt: int
    job_id: str = ""
    gpu_hours: float = 0.0
    cached_from: str = ""  # the run whose cache entry served it ("" when it ran its own job)


#: States the Temporal UI's table shows: a run with more shows the newest (the run page shows them all).
TABLE_ROWS = 40


def state_rows(progress: RunProgress, newest: int = TABLE_ROWS) -> list[StateRow]:
    """The `newest` states' newest attempts, in the order states first ran.

    Costs `newest`, not the run's states: the current details follow every transition,
    and building a row per state made each wave of a 1,000-state chain cost the chain.
    """
    hours = progress.state_hours()
    names = list(islice(reversed(progress.latest), newest))[::-1]
    return [_row(name, progress.latest[name], hours.get(name)) for name in names]


def _row(name: str, record: WaveAttemptRecord, hours: Usage | None) -> StateRow:
    return StateRow(
        state=name,
        status=record.status,
        attempt=record.attempt,
        job_id=record.job_id,
        gpu_hours=round(hours.gpu_hours, 4) if hours is not None else 0.0,
        cached_from=next((c.source_run or "?" for c in record.cache if c.state == name and c.hit), ""),
    )
