"""What a run remembers: wave records, decisions, watermarks, in-flight jobs, and ledger deltas.

Deterministic bookkeeping only; timestamps come from the caller (workflow.now()).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from npaflow.runtime.ledger import (
    DecisionRecord,
    LedgerDelta,
    LedgerStatus,
    Watermark,
    WaveAttemptRecord,
    WaveStatus,
)
from npaflow.runtime.request import BackendName
from npaflow.runtime.summary import RunPhase, RunStatusView, RunSummary, WaveView


@dataclass
class InFlightJob:
    """A launched job the run must cancel by exact id if it is aborted."""

    key: str
    attempt: int
    job_id: str
    backend: BackendName


@dataclass
class RunBook:
    """The run's memory; `take_delta` hands the ledger exporter only what changed."""

    run_id: str
    workflow: str = ""
    ledger_uri: str = ""
    phase: RunPhase = RunPhase.STARTING
    current_states: list[str] = field(default_factory=list)
    error: str = ""
    failure_class: str = ""
    cancel_reason: str = ""
    records: dict[tuple[str, int], WaveAttemptRecord] = field(default_factory=dict)
    decisions: list[DecisionRecord] = field(default_factory=list)
    watermarks: dict[str, Watermark] = field(default_factory=dict)
    in_flight: dict[str, InFlightJob] = field(default_factory=dict)
    _changed: set[tuple[str, int]] = field(default_factory=set)
    _new_decisions: list[DecisionRecord] = field(default_factory=list)
    _new_watermarks: dict[str, Watermark] = field(default_factory=dict)

    def upsert(self, record: WaveAttemptRecord, *, persist: bool = True) -> None:
        """Record (or replace) a wave attempt; persisted ones go into the next delta."""
        self.records[(record.key, record.attempt)] = record
        if persist:
            self._changed.add((record.key, record.attempt))

    def add_decision(self, record: DecisionRecord) -> None:
        """Append a decision read."""
        self.decisions.append(record)
        self._new_decisions.append(record)

    def add_watermark(self, state: str, watermark: Watermark) -> None:
        """Record what a trigger saw when it fired."""
        self.watermarks[state] = watermark
        self._new_watermarks[state] = watermark

    def has_changes(self) -> bool:
        """True when the ledger is behind."""
        return bool(self._changed or self._new_decisions or self._new_watermarks)

    def take_delta(self, status: LedgerStatus | None = None, error: str | None = None) -> LedgerDelta:
        """Return everything changed since the last delta, and forget it."""
        delta = LedgerDelta(status=status, error=error,
                            waves=[self.records[k] for k in sorted(self._changed)],
                            decisions=list(self._new_decisions),
                            watermarks=dict(self._new_watermarks), cancel_reason=self.cancel_reason)
        self._changed.clear()
        self._new_decisions.clear()
        self._new_watermarks.clear()
        return delta

    def view(self) -> RunStatusView:
        """The live status for the `status` query."""
        waves = [WaveView(key=r.key, attempt=r.attempt, states=r.states, job_id=r.job_id,
                          job_name=r.job_name, status=r.status.value, sky_status=r.sky_status)
                 for r in self.records.values()]
        return RunStatusView(run_id=self.run_id, workflow=self.workflow, phase=self.phase,
                             current_states=self.current_states, waves=waves,
                             decisions=self.decisions, ledger_uri=self.ledger_uri,
                             error=self.error, cancel_reason=self.cancel_reason)

    def summary(self, status: str) -> RunSummary:
        """The final summary (reference §6.10)."""
        waves = list(self.records.values())
        steps = [_step_record(record, state) for record in waves for state in record.states]
        runtime_uri = f"{self.ledger_uri}/npa-workflow/runtime.json" if self.ledger_uri else ""
        return RunSummary(workflow=self.workflow, run_id=self.run_id, status=status,
                          wave_count=len(waves), waves=waves, decisions=self.decisions, steps=steps,
                          watermarks=self.watermarks, run_prefix_uri=self.ledger_uri,
                          runtime_state_uri=runtime_uri, error=self.error,
                          failure_class=self.failure_class)


def _step_record(record: WaveAttemptRecord, state: str) -> dict[str, object]:
    ok = record.status is WaveStatus.SUCCEEDED
    step: dict[str, object] = {"state": state, "status": "ok" if ok else record.status.value,
                               "job_id": record.job_id, "job_name": record.job_name,
                               "sky_status": record.sky_status, "wave_key": record.key,
                               "group": record.group, "attempt": record.attempt}
    if record.error:
        step["error"] = record.error
    return step
