"""Which build a run's tasks wait for: the build it is pinned to, unless an override moved it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any, cast

from temporalio.api.common.v1 import Payload
from temporalio.api.deployment.v1 import WorkerDeploymentVersion
from temporalio.api.enums.v1 import VersioningBehavior
from temporalio.api.taskqueue.v1 import PollerInfo
from temporalio.api.workflow.v1 import (
    VersioningOverride,
    WorkflowExecutionInfo,
    WorkflowExecutionVersioningInfo,
)
from temporalio.api.workflowservice.v1 import (
    DescribeTaskQueueResponse,
    DescribeWorkerDeploymentResponse,
    DescribeWorkflowExecutionResponse,
)
from temporalio.client import Client, WorkflowExecution, WorkflowExecutionDescription

from npaflow.temporal.serving import (
    Build,
    no_build_worker_text,
    pinned_build,
    pinned_version,
    unserved_reason,
    unserved_runs,
)

B1 = WorkerDeploymentVersion(deployment_name="npaflow", build_id="b1")
B2 = WorkerDeploymentVersion(deployment_name="npaflow", build_id="b2")
PINNED = VersioningBehavior.VERSIONING_BEHAVIOR_PINNED


def described(info: WorkflowExecutionVersioningInfo) -> WorkflowExecutionDescription:
    response = DescribeWorkflowExecutionResponse()
    response.workflow_execution_info.versioning_info.CopyFrom(info)
    return cast(WorkflowExecutionDescription, SimpleNamespace(raw_description=response))


def test_a_pinned_run_waits_for_the_build_it_is_pinned_to() -> None:
    info = WorkflowExecutionVersioningInfo(behavior=PINNED, deployment_version=B1)
    assert pinned_build(described(info)) == Build("npaflow", "b1")


def test_an_auto_upgrade_or_unversioned_run_waits_for_no_build_in_particular() -> None:
    auto = WorkflowExecutionVersioningInfo(
        behavior=VersioningBehavior.VERSIONING_BEHAVIOR_AUTO_UPGRADE, deployment_version=B1
    )
    assert pinned_build(described(auto)) is None
    assert pinned_build(described(WorkflowExecutionVersioningInfo())) is None


def test_an_override_decides_over_the_build_the_run_started_on() -> None:
    moved = VersioningOverride(
        pinned=VersioningOverride.PinnedOverride(
            behavior=VersioningOverride.PINNED_OVERRIDE_BEHAVIOR_PINNED, version=B2
        )
    )
    info = WorkflowExecutionVersioningInfo(behavior=PINNED, deployment_version=B1, versioning_override=moved)
    assert pinned_build(described(info)) == Build("npaflow", "b2")
    freed = WorkflowExecutionVersioningInfo(
        behavior=PINNED, deployment_version=B1, versioning_override=VersioningOverride(auto_upgrade=True)
    )
    assert pinned_build(described(freed)) is None


def test_the_waiting_line_names_the_build_the_queue_and_where_to_look() -> None:
    text = no_build_worker_text("npaflow", Build("npaflow", "b1"))
    assert text.startswith("no worker of build npaflow:b1 polls task queue 'npaflow'")
    assert "npaflow deployment status" in text


def listed(*build_ids: str) -> WorkflowExecution:
    info = WorkflowExecutionInfo()
    info.search_attributes.indexed_fields["BuildIds"].CopyFrom(
        Payload(metadata={"encoding": b"json/plain"}, data=json.dumps(list(build_ids)).encode())
    )
    return cast(WorkflowExecution, SimpleNamespace(raw_info=info))


def test_a_listed_run_names_the_build_it_is_pinned_to_from_its_row_alone() -> None:
    assert pinned_version(listed("pinned:npaflow:b1")) == "npaflow:b1"
    assert pinned_version(listed("assigned:npaflow:b1")) == ""
    assert pinned_version(listed()) == ""
    assert pinned_version(cast(WorkflowExecution, SimpleNamespace(raw_info=WorkflowExecutionInfo()))) == ""


def poller(build: str, seconds_ago: float) -> PollerInfo:
    info = PollerInfo()
    info.deployment_options.deployment_name, _, info.deployment_options.build_id = build.partition(":")
    info.last_access_time.FromDatetime(datetime.now(UTC) - timedelta(seconds=seconds_ago))
    return info


def client_with(pollers: dict[str, list[PollerInfo]], current: str = "b2") -> tuple[Client, list[str]]:
    """A client whose queues have these pollers and whose deployment's current build is `current`."""
    asked: list[str] = []

    async def describe_task_queue(request: Any) -> DescribeTaskQueueResponse:
        asked.append(request.task_queue.name)
        return DescribeTaskQueueResponse(pollers=pollers[request.task_queue.name])

    async def describe_worker_deployment(request: Any) -> DescribeWorkerDeploymentResponse:
        asked.append(f"deployment {request.deployment_name}")
        described = DescribeWorkerDeploymentResponse()
        described.worker_deployment_info.routing_config.current_deployment_version.build_id = current
        return described

    service = SimpleNamespace(
        describe_task_queue=describe_task_queue, describe_worker_deployment=describe_worker_deployment
    )
    return cast(Client, SimpleNamespace(namespace="default", workflow_service=service)), asked


async def test_listed_runs_nothing_moves_say_why_with_one_describe_per_queue() -> None:
    client, asked = client_with({"q": [poller("npaflow:b2", 5), poller("npaflow:b1", 600)], "idle": []})
    runs = {
        "served": ("q", "npaflow:b2"),
        "stranded": ("q", "npaflow:b1"),
        "unpinned": ("q", ""),
        "alone": ("idle", ""),
    }
    assert await unserved_runs(client, runs) == {
        "stranded": "no worker of build npaflow:b1 polls task queue 'q'",
        "alone": "no worker polls task queue 'idle'",
    }
    assert sorted(asked) == ["deployment npaflow", "idle", "q"]


async def test_an_unpinned_run_whose_deployments_current_build_has_no_worker_says_so_once_per_queue() -> None:
    client, asked = client_with({"q": [poller("npaflow:b2", 5)]}, current="b1")
    runs = {"new-1": ("q", ""), "new-2": ("q", ""), "pinned": ("q", "npaflow:b2")}
    promote = "no worker of the current build polls its queue (promote the new build)"
    assert await unserved_runs(client, runs) == {"new-1": promote, "new-2": promote}
    assert sorted(asked) == ["deployment npaflow", "q"]
    said = await unserved_reason(client, "q", None)
    assert said.startswith("new runs on task queue 'q' start on build npaflow:b1, the deployment's current")
    assert "workers of build b2 do: promote one (`npaflow deployment promote b2`" in said
