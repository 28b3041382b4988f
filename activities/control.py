"""`request_cancel`: lets the `cancel` signal end a run through Temporal's own cancellation."""

from __future__ import annotations

from temporalio import activity

from npaflow.runtime.contract import REQUEST_CANCEL
from npaflow.runtime.messages import RequestCancelInput


@activity.defn(name=REQUEST_CANCEL.name)
async def request_cancel(request: RequestCancelInput) -> None:
    """Ask the server to cancel the execution, so it ends CANCELED like a UI cancel does."""
    handle = activity.client().get_workflow_handle(request.workflow_id, run_id=request.execution_id)
    await handle.cancel()
