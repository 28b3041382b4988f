"""Keeping the run's ledger current: send the export activity only what changed."""

from __future__ import annotations

from npaflow.runtime.contract import EXPORT_LEDGER
from npaflow.runtime.ledger import LedgerStatus
from npaflow.runtime.messages import ExportLedgerInput, LoadedSpec
from npaflow.runtime.run_state import RunState
from workflows_def.activity_calls import LEDGER_EXPORT_DEADLINE, LEDGER_RETRY, call_local


class LedgerSync:
    """Exports `RunState` deltas; the first export also writes the submitted spec."""

    def __init__(self, state: RunState) -> None:
        self.state = state
        self.loaded: LoadedSpec | None = None
        self._spec_pending = ""

    def attach(self, loaded: LoadedSpec) -> None:
        """Start exporting once the spec (and so the ledger location) is known."""
        self.loaded = loaded
        self._spec_pending = loaded.workflow_yaml

    async def flush(self) -> None:
        """Export what changed since the last export (after every wave transition)."""
        if self.state.has_changes() or self._spec_pending:
            await self.export(LedgerStatus.RUNNING if self._spec_pending else None)

    async def export(self, status: LedgerStatus | None = None, error: str | None = None) -> None:
        """Merge the pending delta into the stored ledger; waits out storage outages."""
        if self.loaded is None:
            return
        spec = self.loaded.spec
        delta = self.state.take_delta(status=status, error=error)
        if self._spec_pending:
            delta = delta.model_copy(update={"plan_fingerprint": self.loaded.plan_fingerprint})
        await call_local(
            EXPORT_LEDGER, ExportLedgerInput(
                run_id=self.state.run_id, workflow=spec.name, api_version=spec.api_version,
                ledger_uri=self.loaded.ledger_uri, input_source=self.loaded.input_source,
                delta=delta, workflow_yaml=self._spec_pending),
            schedule_to_close_timeout=LEDGER_EXPORT_DEADLINE, retry_policy=LEDGER_RETRY,
            summary=f"export ledger ({status.value if status else 'update'})")
        self._spec_pending = ""
