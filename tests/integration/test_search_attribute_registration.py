"""A worker registers npaflow's search attributes, and refuses to start when they are missing.

Temporal fails every workflow task that upserts an unregistered attribute, so a
namespace where the worker may not register them (Temporal Cloud without admin
rights) must be caught at worker start, not as runs stuck in task retries.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest, ListSearchAttributesResponse
from temporalio.service import RPCError, RPCStatusCode

from npaflow.errors import UsageError
from worker.main import register_search_attributes
from workflows_def import SEARCH_ATTRIBUTE_KEYS

pytestmark = pytest.mark.integration


class DeniedOperator:
    """Temporal's operator service as a namespace without admin rights answers it."""

    def __init__(self, present: set[str]) -> None:
        self.present = present

    async def add_search_attributes(self, request: Any) -> None:
        raise RPCError("Request unauthorized.", RPCStatusCode.PERMISSION_DENIED, b"")

    async def list_search_attributes(self, request: Any) -> ListSearchAttributesResponse:
        return ListSearchAttributesResponse(custom_attributes=dict.fromkeys(self.present, 2))


async def test_a_worker_refuses_to_start_when_it_can_neither_register_nor_find_them() -> None:
    client = SimpleNamespace(namespace="team.acct", operator_service=DeniedOperator({"NpaflowPhase"}))
    with pytest.raises(UsageError) as error:
        await register_search_attributes(client)  # type: ignore[arg-type]
    message = str(error.value)
    assert "NpaflowWorkflow, NpaflowState" in message and "team.acct" in message
    assert "--name NpaflowState --type KeywordList" in message


async def test_attributes_registered_by_an_operator_beforehand_are_enough() -> None:
    present = {key.name for key in SEARCH_ATTRIBUTE_KEYS}
    client = SimpleNamespace(namespace="team.acct", operator_service=DeniedOperator(present))
    await register_search_attributes(client)  # type: ignore[arg-type]


async def test_the_dev_server_namespace_gets_all_of_them(env: Any) -> None:
    await register_search_attributes(env.client)
    listed = await env.client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=env.client.namespace)
    )
    assert {key.name for key in SEARCH_ATTRIBUTE_KEYS} <= set(listed.custom_attributes)
