"""npaflow's helper workflows (log and artifact reads, reports, cache admin, repairs): how they run.

They run where the run's jobs and storage are (a worker), in npaflow's namespace
division (out of the run list), and are deleted once they answered; quota pools
and cache flights, which outlive builds, follow the current build.
"""

from __future__ import annotations

import contextlib
import uuid
from datetime import timedelta
from typing import TypeVar

from pydantic import BaseModel
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.workflowservice.v1 import DeleteWorkflowExecutionRequest
from temporalio.client import Client, WorkflowFailureError
from temporalio.common import (
    AutoUpgradeVersioningOverride,
    SearchAttributeKey,
    SearchAttributePair,
    TypedSearchAttributes,
)
from temporalio.service import RPCError

from npaflow.errors import UsageError
from npaflow.runtime.contract import HELPER_DIVISION, NAMESPACE_DIVISION_ATTRIBUTE, RunMemo
from npaflow.temporal.client import describe_or_fail, has_pollers
from npaflow.temporal.errors import innermost_message

ResultT = TypeVar("ResultT")


#: How quota pools and cache flights are started: they outlive builds, so they follow the
#: current one (their code changes behind patches). Pinned, as runs are, one would be
#: served only by the build that started it, and go silent once its workers retire.
COORDINATOR_VERSIONING = AutoUpgradeVersioningOverride()


async def require_worker(client: Client, task_queue: str, why: str) -> None:
    """Refuse at once when no worker polls `task_queue` for activities (a helper would just wait).

    `why`: why the command needs one ("logs are read by workers").

    Raises:
        UsageError: nobody polls the queue.
    """
    if not await has_pollers(client, task_queue, activities=True):
        raise UsageError(
            f"no worker polls task queue '{task_queue}': {why} (start one with 'npaflow worker')"
        )


def helper_attributes() -> TypedSearchAttributes:
    """A helper workflow's search attributes: in npaflow's namespace division, out of the run list."""
    division = SearchAttributeKey.for_keyword(NAMESPACE_DIVISION_ATTRIBUTE)
    return TypedSearchAttributes([SearchAttributePair(division, HELPER_DIVISION)])


async def run_helper(
    client: Client,
    workflow_type: str,
    arg: BaseModel,
    *,
    name: str,
    task_queue: str,
    result_type: type[ResultT],
    failing: str = "",
) -> ResultT:
    """Run a small helper workflow (read logs, list artifacts) and delete it once it answered.

    With `failing` (what the user is told, e.g. "run r1: artifacts could not be read"), a
    helper that failed is a UsageError saying that and why.

    Helpers read where the run's jobs and storage are (a worker). They run in npaflow's
    namespace division, which Temporal's default list and the UI leave out, so the run
    list never shows them, and are deleted once they answered. Their ids hold ':', which
    no run id has.
    """
    handle = await client.start_workflow(
        workflow_type,
        arg,
        id=f"npaflow:{name}:{uuid.uuid4().hex[:8]}",
        task_queue=task_queue,
        result_type=result_type,
        execution_timeout=timedelta(minutes=6),
        search_attributes=helper_attributes(),
    )
    try:
        result: ResultT = await handle.result()
        return result
    except WorkflowFailureError as error:
        if not failing:
            raise
        raise UsageError(f"{failing}: {innermost_message(error)}") from None
    finally:
        with contextlib.suppress(RPCError):
            await client.workflow_service.delete_workflow_execution(
                DeleteWorkflowExecutionRequest(
                    namespace=client.namespace,
                    workflow_execution=WorkflowExecution(
                        workflow_id=handle.id, run_id=handle.result_run_id or ""
                    ),
                )
            )


async def ledger_on_worker(client: Client, run_id: str, reading: str) -> tuple[str, str]:
    """The run's ledger location and task queue, for a helper a worker runs there.

    Raises:
        UsageError: no such run, no ledger yet, or no worker polls its queue (`reading` says
            what the worker would have done, e.g. "artifacts are read").
    """
    description = await describe_or_fail(client.get_workflow_handle(run_id))
    ledger_uri = RunMemo.read(await description.memo()).ledger_uri
    if not ledger_uri:
        raise UsageError(f"run {run_id} has no ledger location yet (it has not loaded its spec)")
    queue = description.task_queue or ""
    if not await has_pollers(client, queue, activities=True):
        raise UsageError(
            f"no worker polls task queue '{queue}': {reading} by workers (start one with 'npaflow worker')"
        )
    return ledger_uri, queue
