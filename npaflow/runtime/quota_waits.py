"""A run's waits for GPUs from its quota pool: each one a record, open while it waits, kept after.

A wave that asks its pool and is told to wait opens a record (pool, GPUs, place in
line, since when); each later answer refreshes its place; the grant, or the wave
giving up (a cancel, a refusal), closes it with how long it waited. Closed records
go to the ledger and stay in the `status` answer (a resumed or continued run's
too: earlier executions' closed waits are carried); open ones say what the run
waits for now, in `status`, `list`, the page and the Temporal UI.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from npaflow.presets import STRICT
from npaflow.runtime.timestamps import epoch_seconds
from npaflow.waves import WaveKey


class QuotaWait(BaseModel):
    """One wave's wait for GPUs (`granted_at` or `left_at` once it ended)."""

    model_config = STRICT

    id: str  # wave key and when it was queued: one record per wait
    pool: str
    wave: str
    gpus: int = 0
    position: int = 0  # 1 = next in line (the newest answer)
    in_use: int = 0
    capacity: int = 0
    queued_at: str
    granted_at: str = ""
    left_at: str = ""  # stopped waiting without a grant (cancelled, refused, the pool gone)
    seconds: float = Field(default=0.0, ge=0)

    def is_open(self) -> bool:
        """Still waiting."""
        return not (self.granted_at or self.left_at)

    def states(self) -> str:
        """The waiting wave's states, as the spec names them."""
        try:
            return ", ".join(WaveKey.parse(self.wave).states) or self.wave
        except ValueError:
            return self.wave

    def text(self) -> str:
        """`waiting for quota gpu16: needs 8 GPUs, 12 of 16 GPUs in use, position 2 (train) since …`."""
        if self.is_open():
            return (
                f"waiting for quota {self.pool}: needs {self.gpus} GPUs, {self.in_use} of {self.capacity} "
                f"GPUs in use, position {self.position} ({self.states()}) since {self.queued_at}"
            )
        how = f"granted at {self.granted_at}" if self.granted_at else f"left the line at {self.left_at}"
        return f"waited {self.seconds:.0f}s for quota {self.pool} ({self.gpus} GPUs, {self.states()}): {how}"


class QuotaWaits:
    """The run's waits: open ones by wave, every one by id (for the ledger)."""

    def __init__(self) -> None:
        self.by_id: dict[str, QuotaWait] = {}
        self.open: dict[str, str] = {}  # wave key -> id of its open wait

    def waiting(self, wait: QuotaWait) -> QuotaWait:
        """Open the wave's wait, or refresh its place in line (keeping when it was queued)."""
        wait_id = self.open.get(wait.wave)
        if wait_id is not None:
            wait = wait.model_copy(update={"id": wait_id, "queued_at": self.by_id[wait_id].queued_at})
        self.by_id[wait.id] = wait
        self.open[wait.wave] = wait.id
        return wait

    def settled(self, wave: str, *, now: str, granted: bool) -> QuotaWait | None:
        """Close the wave's open wait (None when it never waited)."""
        wait_id = self.open.pop(wave, None)
        if wait_id is None:
            return None
        wait = self.by_id[wait_id]
        start, end = epoch_seconds(wait.queued_at), epoch_seconds(now)
        seconds = max(0.0, end - start) if start is not None and end is not None else 0.0
        ended = wait.model_copy(
            update={"granted_at" if granted else "left_at": now, "seconds": seconds, "position": 0}
        )
        self.by_id[wait_id] = ended
        return ended

    def carried(self, waits: Sequence[QuotaWait]) -> None:
        """Earlier executions' ended waits (the load drops open ones), not sent to the ledger again."""
        self.by_id.update((wait.id, wait) for wait in waits)

    def records(self) -> list[QuotaWait]:
        """Every wait of the run, in the order they began."""
        return list(self.by_id.values())

    def open_texts(self) -> list[str]:
        """What the run waits for now, one line per waiting wave."""
        return [self.by_id[wait_id].text() for wait_id in self.open.values()]

    def waited_seconds(self) -> float:
        """How long the run's waves waited for GPUs, in all (open waits count only once closed)."""
        return sum(wait.seconds for wait in self.by_id.values())
