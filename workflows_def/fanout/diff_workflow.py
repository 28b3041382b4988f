"""`NpaflowItemsDiff`: a run's forEach lists read again on a worker, which holds the storage credentials."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from npaflow.fanout.changes import DiffItemsInput, ItemsChanges
from npaflow.runtime.contract import DIFF_ITEMS, ITEMS_DIFF_WORKFLOW_TYPE
from workflows_def.activity_calls import SHORT_RETRY, call
from workflows_def.input_refusal import MALFORMED_INPUT


@workflow.defn(name=ITEMS_DIFF_WORKFLOW_TYPE, failure_exception_types=MALFORMED_INPUT)
class NpaflowItemsDiff:
    """One `diff_items` on the run's task queue, before `resume --reread-items` restarts it."""

    @workflow.run
    async def run(self, request: DiffItemsInput) -> ItemsChanges:
        """Each list's copy in the run's ledger against its source now."""
        return await call(
            DIFF_ITEMS,
            request,
            start_to_close_timeout=timedelta(minutes=5),
            retry_policy=SHORT_RETRY,
            summary=f"forEach lists of {request.ledger_uri}",
        )
