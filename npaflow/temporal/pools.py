"""The quota pools' client: create or change a pool, ask its status, list and delete pools.

A pool is one long-lived workflow (workflows_def/quota/pool_workflow.py); the CLI's
`quota` command, the run page and the worker's metrics ask it the same way.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from google.protobuf.field_mask_pb2 import FieldMask
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import VersioningBehavior
from temporalio.api.workflow.v1 import VersioningOverride, WorkflowExecutionOptions
from temporalio.api.workflowservice.v1 import UpdateWorkflowExecutionOptionsRequest
from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.service import RPCError, RPCStatusCode

from npaflow.errors import UsageError
from npaflow.quota import PoolConfig, PoolStatus, name_problem
from npaflow.quota.messages import (
    CONFIGURE_UPDATE,
    DELETE_UPDATE,
    POOL_PREFIX,
    POOL_WORKFLOW_TYPE,
    STATUS_QUERY,
    pool_workflow_id,
)
from npaflow.runtime.contract import HELPER_DIVISION, NAMESPACE_DIVISION_ATTRIBUTE
from npaflow.temporal.client import query_wait
from npaflow.temporal.errors import rpc_error_text
from npaflow.temporal.helper_runs import COORDINATOR_VERSIONING, helper_attributes


class PoolMissing(UsageError):
    """No such pool (never created, or deleted)."""


class PoolUnserved(UsageError):
    """The pool exists but no worker polls its task queue, so nobody can answer for it."""


#: Seconds a pool's status query may take before the pool counts as not answering.
POOL_QUERY_SECONDS = 15


async def set_pool(client: Client, pool: str, config: PoolConfig, task_queue: str) -> PoolStatus:
    """Create the pool (its workflow) or change it; its status after."""
    start: WithStartWorkflowOperation[Any, None] = WithStartWorkflowOperation(
        POOL_WORKFLOW_TYPE,
        None,
        id=pool_workflow_id(pool),
        task_queue=task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        search_attributes=helper_attributes(),  # out of the UI's run list
        versioning_override=COORDINATOR_VERSIONING,
    )
    queue = await _queue_of(client, pool, task_queue)
    seconds, served = await query_wait(client, queue, POOL_QUERY_SECONDS)
    try:
        status: PoolStatus = await client.execute_update_with_start_workflow(
            CONFIGURE_UPDATE,
            config,
            start_workflow_operation=start,
            result_type=PoolStatus,
            rpc_timeout=timedelta(seconds=seconds),
        )
    except WorkflowUpdateRPCTimeoutOrCancelledError:
        raise _unanswered(
            pool, queue, seconds, served, "so the change is not confirmed", "; then run this again"
        ) from None
    return status


async def _queue_of(client: Client, pool: str, task_queue: str) -> str:
    """The task queue the pool's workflow runs on: its own when it exists, else the one given.

    A running pool still pinned to the build that made it is moved to follow the
    current build first (see `_follow_current_build`).
    """
    try:
        description = await client.get_workflow_handle(pool_workflow_id(pool)).describe()
    except RPCError:
        return task_queue
    if description.status != WorkflowExecutionStatus.RUNNING:
        return task_queue
    await _follow_current_build(client, description)
    return description.task_queue or task_queue


async def _follow_current_build(client: Client, description: WorkflowExecutionDescription) -> None:
    """Give a pool pinned by its workers' default the AutoUpgrade override new pools start with.

    Pools made before npaflow started them AutoUpgrade are pinned to their first
    build and go silent once that build's workers retire; this moves such a pool at
    its next task. An override someone set on purpose (pinned or not) is kept.
    """
    info = description.raw_description.workflow_execution_info.versioning_info
    if info.behavior != VersioningBehavior.VERSIONING_BEHAVIOR_PINNED or info.HasField("versioning_override"):
        return
    request = UpdateWorkflowExecutionOptionsRequest(
        namespace=client.namespace,
        workflow_execution=WorkflowExecution(workflow_id=description.id, run_id=description.run_id),
        workflow_execution_options=WorkflowExecutionOptions(
            versioning_override=VersioningOverride(auto_upgrade=True)
        ),
        update_mask=FieldMask(paths=["versioning_override"]),
    )
    try:
        await client.workflow_service.update_workflow_execution_options(request)
    except RPCError as exc:
        raise UsageError(
            f"quota pool {description.id.removeprefix(POOL_PREFIX)} is pinned to the build that made it "
            f"and could not be moved to the current one: {rpc_error_text(exc)}"
        ) from None


async def pool_status(client: Client, pool: str) -> PoolStatus:
    """The pool's status.

    Raises:
        UsageError: no such pool (or it cannot be asked).
    """
    if problem := name_problem("quota pool", pool):
        raise UsageError(problem)
    handle = client.get_workflow_handle(pool_workflow_id(pool))
    missing = PoolMissing(f"no quota pool {pool!r}: create it with `npaflow quota set {pool} --gpus N`")
    try:
        description = await handle.describe()
        if description.status != WorkflowExecutionStatus.RUNNING:
            raise missing  # deleted (a closed pool still answers queries from its history)
        queue = description.task_queue or ""
        seconds, served = await query_wait(client, queue, POOL_QUERY_SECONDS)
        status: PoolStatus = await asyncio.wait_for(
            handle.query(STATUS_QUERY, result_type=PoolStatus), seconds
        )
    except RPCError as error:
        if error.status is RPCStatusCode.NOT_FOUND:
            raise missing from None
        if error.status is RPCStatusCode.FAILED_PRECONDITION:  # its workflow task fails: never "missing"
            reason = error.message.rstrip(".")
            raise UsageError(
                f"quota pool {pool} cannot answer: {reason} (its runs wait until it can; the workers' "
                f"log says why, and 'temporal workflow describe --workflow-id {pool_workflow_id(pool)}' "
                "shows the failing task)"
            ) from None
        raise UsageError(f"quota pool {pool} cannot be asked: {error.message}") from None
    except TimeoutError:
        raise _unanswered(pool, queue, seconds, served, "so it cannot answer", "") from None
    return status


def _unanswered(pool: str, queue: str, seconds: float, served: bool, so: str, then: str) -> UsageError:
    """Why the pool gave no answer in time: slow, or no worker polls its queue at all."""
    if served:
        return UsageError(f"quota pool {pool} did not answer within {seconds:g} s")
    return PoolUnserved(
        f"quota pool {pool}: no worker polls its task queue '{queue}', {so} "
        f"(start one: npaflow worker --task-queue {queue}{then})"
    )


async def pool_names(client: Client) -> list[str]:
    """Every pool that exists now."""
    names = []
    query = (
        f"WorkflowType = '{POOL_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running' "
        f"AND {NAMESPACE_DIVISION_ATTRIBUTE} = '{HELPER_DIVISION}'"  # pools live out of the run list
    )
    async for execution in client.list_workflows(query):
        names.append(execution.id.removeprefix(POOL_PREFIX))
    return sorted(set(names))


async def delete_pool(client: Client, pool: str) -> None:
    """End the pool's workflow; refused while a run holds or waits for its GPUs.

    Raises:
        UsageError: no such pool, or it is in use.
    """
    await pool_status(client, pool)  # names the pool when it does not exist
    handle = client.get_workflow_handle(pool_workflow_id(pool))
    refused = await handle.execute_update(DELETE_UPDATE, result_type=str)
    if refused:
        raise UsageError(f"quota pool {pool} is in use: {refused}")
    await handle.result()  # the pool's workflow ends at once: nothing holds or waits


async def every_pool_status(client: Client) -> tuple[dict[str, PoolStatus], dict[str, UsageError]]:
    """Every pool's status, asked at once, and why each pool that did not answer did not.

    A pool deleted since visibility listed it is in neither. Asked together, ten pools
    nobody serves cost one wait (`quota list`, the worker's metrics), not ten.
    """
    pools = await pool_names(client)
    answers = await asyncio.gather(*(pool_status(client, pool) for pool in pools), return_exceptions=True)
    statuses: dict[str, PoolStatus] = {}
    unanswered: dict[str, UsageError] = {}
    for pool, answer in zip(pools, answers, strict=True):
        if isinstance(answer, PoolStatus):
            statuses[pool] = answer
        elif isinstance(answer, PoolMissing):
            continue
        elif isinstance(answer, UsageError):
            unanswered[pool] = answer
        else:
            raise answer
    return statuses, unanswered
