"""Which build a run's tasks wait for: the build it is pinned to, unless an override moved it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

from temporalio.api.deployment.v1 import WorkerDeploymentVersion
from temporalio.api.enums.v1 import VersioningBehavior
from temporalio.api.workflow.v1 import VersioningOverride, WorkflowExecutionVersioningInfo
from temporalio.api.workflowservice.v1 import DescribeWorkflowExecutionResponse
from temporalio.client import WorkflowExecutionDescription

from npaflow.temporal.serving import Build, no_build_worker_text, pinned_build

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
