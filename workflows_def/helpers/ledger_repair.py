"""`NpaflowLedgerRepair`: writes what a closed run's ledger lacks, for `npaflow status`.

A run whose last export failed (its ledger storage was down when it ended)
keeps the pending delta in its history; `npaflow status` reads it with the
run's `pending_ledger` query and starts this workflow, whose export brings
runtime.json, manifest.json and status.json to the run's final state.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from npaflow.runtime.contract import EXPORT_LEDGER, LEDGER_REPAIR_WORKFLOW_TYPE
from npaflow.runtime.messages import ExportLedgerInput, ExportResult
from workflows_def.activity_calls import LEDGER_RETRY, call
from workflows_def.input_refusal import MALFORMED_INPUT


@workflow.defn(name=LEDGER_REPAIR_WORKFLOW_TYPE, failure_exception_types=MALFORMED_INPUT)
class NpaflowLedgerRepair:
    """One ledger export, retried while storage is still failing (within a few minutes)."""

    @workflow.run
    async def run(self, request: ExportLedgerInput) -> ExportResult:
        """Export the pending delta exactly as the run would have."""
        return await call(
            EXPORT_LEDGER,
            request,
            schedule_to_close_timeout=timedelta(minutes=5),
            retry_policy=LEDGER_RETRY,
            summary=f"repair the ledger of {request.run_id}",
        )
