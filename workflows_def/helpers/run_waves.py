"""`NpaflowRunWaves`: a page of an ended run's wave attempts, read from its ledger on a worker.

An ended run's summary keeps only its newest attempts; the rest are in its ledger,
which a worker (holding the storage credentials) reads. Asking the ended run's
`status` query instead makes a worker replay the run's whole last execution.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from npaflow.runtime.contract import READ_RUN_WAVES, RUN_WAVES_WORKFLOW_TYPE
from npaflow.runtime.reads import RunWaves, RunWavesInput
from workflows_def.activity_calls import SHORT_RETRY, call
from workflows_def.input_refusal import MALFORMED_INPUT


@workflow.defn(name=RUN_WAVES_WORKFLOW_TYPE, failure_exception_types=MALFORMED_INPUT)
class NpaflowRunWaves:
    """One `read_run_waves` page on the run's task queue."""

    @workflow.run
    async def run(self, request: RunWavesInput) -> RunWaves:
        """The attempts before `request.before`, newest first within a status page's budget."""
        return await call(
            READ_RUN_WAVES,
            request,
            start_to_close_timeout=timedelta(minutes=1),
            retry_policy=SHORT_RETRY,
            summary=f"wave attempts before {request.before} from {request.ledger_uri}",
        )
