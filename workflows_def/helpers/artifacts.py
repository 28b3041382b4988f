"""`NpaflowArtifacts`: lists a run's artifacts on a worker, which holds the storage credentials."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from npaflow.runtime.contract import ARTIFACTS_WORKFLOW_TYPE, LIST_ARTIFACTS
from npaflow.runtime.reads import ListArtifactsInput, RunArtifacts
from workflows_def.activity_calls import SHORT_RETRY, call
from workflows_def.input_refusal import MALFORMED_INPUT


@workflow.defn(name=ARTIFACTS_WORKFLOW_TYPE, failure_exception_types=MALFORMED_INPUT)
class NpaflowArtifacts:
    """One `list_artifacts` on the run's task queue."""

    @workflow.run
    async def run(self, request: ListArtifactsInput) -> RunArtifacts:
        """The run's outputs, decisions and trigger objects, checked against storage now."""
        return await call(
            LIST_ARTIFACTS,
            request,
            start_to_close_timeout=timedelta(minutes=5),
            retry_policy=SHORT_RETRY,
            summary=f"artifacts of {request.ledger_uri}",
        )
