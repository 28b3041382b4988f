"""`NpaflowRunReport`: renders a run's report.html on a worker, which holds the storage credentials."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from npaflow.runtime.contract import RENDER_REPORT, REPORT_WORKFLOW_TYPE
from npaflow.runtime.reads import RenderReportInput, RunReport
from workflows_def.activity_calls import SHORT_RETRY, call
from workflows_def.input_refusal import MALFORMED_INPUT


@workflow.defn(name=REPORT_WORKFLOW_TYPE, failure_exception_types=MALFORMED_INPUT)
class NpaflowRunReport:
    """One `render_report` on the run's task queue."""

    @workflow.run
    async def run(self, request: RenderReportInput) -> RunReport:
        """The run's page, from its ledger and spec as stored now."""
        return await call(
            RENDER_REPORT,
            request,
            start_to_close_timeout=timedelta(minutes=5),
            retry_policy=SHORT_RETRY,
            summary=f"report of {request.ledger_uri}",
        )
