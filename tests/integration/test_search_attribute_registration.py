"""A worker registers npaflow's search attributes, and refuses to start when they are missing.

Temporal fails every workflow task that upserts an unregistered attribute, so a
namespace where the worker may not register them (Temporal Cloud without admin
rights) must be caught at worker start, not as runs stuck in task retries; so must a
namespace that does not exist at all.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest, ListSearchAttributesResponse
from temporalio.service import RPCError, RPCStatusCode

from npaflow.errors import UsageError
from tests.harness import start_worker_process
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


@pytest.mark.parametrize("deployment", ["none", "npaflow"])
def test_a_worker_for_a_namespace_the_server_lacks_exits_2_with_one_line_naming_it(
    env: Any, tmp_path: Path, deployment: str
) -> None:
    worker = start_worker_process(
        env, tmp_path / "home", "tq-ns", TEMPORAL_NAMESPACE="no-such-ns", NPAFLOW_DEPLOYMENT=deployment
    )
    assert worker.wait(timeout=60) == 2
    log = (tmp_path / "home" / "worker.log").read_text()
    assert "namespace 'no-such-ns' does not exist" in log and "temporal operator namespace create" in log
    assert "Traceback" not in log and "worker.started" not in log
