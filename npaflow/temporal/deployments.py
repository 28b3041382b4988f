"""A Worker Deployment as the server sees it: its versions and which one takes new runs.

Shared by the worker (adopting the first version, promoting) and the CLI (saying why a
new run waits: its deployment's current version has no worker on its queue).
"""

from __future__ import annotations

import asyncio

from temporalio.api.workflowservice.v1 import (
    DescribeWorkerDeploymentRequest,
    DescribeWorkerDeploymentResponse,
)
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from npaflow.temporal.errors import is_namespace_missing

#: The server's name for "no version" in a routing config.
UNVERSIONED = "__unversioned__"


async def describe(client: Client, name: str) -> DescribeWorkerDeploymentResponse | None:
    """The deployment as the server sees it; None when no worker of it has polled yet.

    The server rate-limits requests per deployment: a throttled call waits and retries.
    """
    for delay in (0.5, 1.0, 2.0, 4.0, 8.0, 0.0):
        try:
            return await client.workflow_service.describe_worker_deployment(
                DescribeWorkerDeploymentRequest(namespace=client.namespace, deployment_name=name)
            )
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND and not is_namespace_missing(exc):
                return None
            if exc.status != RPCStatusCode.RESOURCE_EXHAUSTED or not delay:
                raise
            await asyncio.sleep(delay)
    return None


def current_build(described: DescribeWorkerDeploymentResponse | None) -> str:
    """The current version's build id ("" when none is current)."""
    if described is None:
        return ""
    routing = described.worker_deployment_info.routing_config
    if routing.current_deployment_version.build_id:
        return routing.current_deployment_version.build_id
    version = routing.current_version
    return "" if not version or version == UNVERSIONED else version.split(":")[-1].split(".")[-1]
