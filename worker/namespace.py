"""The namespace a worker serves must exist before it registers anything or polls.

Without this check a mistyped `TEMPORAL_NAMESPACE` surfaced as a warning about
search attributes, then as the SDK's worker-validation traceback once polling began.
"""

from __future__ import annotations

from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
from temporalio.client import Client
from temporalio.service import RPCError

from npaflow.errors import UsageError
from npaflow.temporal.errors import rpc_error_text


async def require_namespace(client: Client) -> None:
    """Describe the client's namespace, as the SDK does before it polls.

    Raises:
        UsageError: the namespace does not exist, or the server will not describe it.
    """
    try:
        await client.workflow_service.describe_namespace(DescribeNamespaceRequest(namespace=client.namespace))
    except RPCError as exc:
        raise UsageError(rpc_error_text(exc)) from None
