"""`NpaflowCacheAdmin`: lists, explains or purges cache entries on a worker (it holds the credentials)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from npaflow.runtime.cache.admin import CacheAdminInput, CacheAdminResult
from npaflow.runtime.contract import CACHE_ADMIN, CACHE_ADMIN_WORKFLOW_TYPE
from workflows_def.activity_calls import SHORT_RETRY, call
from workflows_def.input_refusal import MALFORMED_INPUT


@workflow.defn(name=CACHE_ADMIN_WORKFLOW_TYPE, failure_exception_types=MALFORMED_INPUT)
class NpaflowCacheAdmin:
    """One `cache_admin` on the task queue the CLI names."""

    @workflow.run
    async def run(self, request: CacheAdminInput) -> CacheAdminResult:
        """What the entries are, why a state missed, or how many were purged."""
        return await call(
            CACHE_ADMIN,
            request,
            start_to_close_timeout=timedelta(minutes=5),
            retry_policy=SHORT_RETRY,
            summary=f"cache {request.action.value}",
        )
