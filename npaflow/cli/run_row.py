"""One run as `npaflow list` and the runs page of `npaflow ui` show it: the row both build on."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class RunRow(BaseModel):
    """A run: its newest execution's phase and timing, its total GPU-hours and GPU waits."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    spec: str = ""
    phase: str = ""
    execution_status: str = "UNKNOWN"
    current_states: list[str] = []
    started_at: str = ""
    duration_seconds: float = 0.0
    gpu_hours: float | None = None
    waited_seconds: float | None = None  # None: an older run whose memo never said
    executions: int = 1
    waiting_for: str = ""  # `quota POOL (N GPUs, position P)` or `run R's cache entry` while it waits
    no_worker: str = ""  # why nothing moves an open run now (no worker, or none of its build)
    #: Jobs its end cancelled unverified: the reconciler may since have clocked them further (not shown).
    unverified_cancels: int = Field(default=0, exclude=True)

    def shown_phase(self) -> str:
        """The phase as the list says it, with what the run waits for (a GPU quota, or a worker)."""
        phase = self.phase or self.execution_status.lower()
        phase += f" for {self.waiting_for}" if self.waiting_for else ""
        return phase + (f" ({self.no_worker})" if self.no_worker else "")

    def is_open(self) -> bool:
        """True while the run's newest execution runs."""
        return self.execution_status == "RUNNING"

    def document(self) -> dict[str, Any]:
        """`list --json`'s row: `waiting_for` and `no_worker` only while they hold."""
        unset = {name for name in ("waiting_for", "no_worker") if not getattr(self, name)}
        return self.model_dump(exclude=unset)
