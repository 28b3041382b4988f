"""Operator actions from the Temporal UI/CLI that keep a run's exactly-once outcome.

Pausing and unpausing or resetting the await of a running wave, and resetting the
workflow to its first or last workflow task, all end with each wave run once
(docs/operations.md lists what every action does to a run and its jobs).
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from temporalio.client import WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from npaflow.runtime.summary import RunSummary
from tests.harness import TEMPORAL_BIN, Harness
from tests.helpers import eventually

pytestmark = pytest.mark.integration

SPEC = "runtime/marker-steps.yaml"


async def temporal(env: WorkflowEnvironment, *args: str) -> None:
    """The Temporal CLI against the test server (without blocking the in-process worker)."""
    address = env.client.service_client.config.target_host
    process = await asyncio.create_subprocess_exec(
        str(TEMPORAL_BIN),
        *args,
        "--address",
        address,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, (args, out.decode(), err.decode())


async def running_await(handle: WorkflowHandle, tmp_path: Path) -> str:
    """The activity id of the slow wave's await, once its job has started."""
    await eventually(lambda: (tmp_path / handle.id / "slow.started").exists(), timeout=60, what="job started")

    async def activity_id() -> str | None:
        pending = (await handle.describe()).raw_description.pending_activities
        return next((a.activity_id for a in pending if a.activity_type.name == "await_wave"), None)

    return await eventually(activity_id, timeout=30, what="await_wave pending")


def assert_each_wave_ran_once(tmp_path: Path, run_id: str) -> None:
    assert (tmp_path / run_id / "marker").read_text().split() == ["slow", "after"]
    assert len((tmp_path / run_id / "slow.started").read_text().split()) == 1


@pytest.mark.parametrize("action", ["pause-unpause", "reset"])
async def test_an_operator_action_on_the_running_await_keeps_each_wave_to_one_run(
    local_harness: Harness, env: WorkflowEnvironment, tmp_path: Path, action: str
) -> None:
    run_id = f"rt-act-{uuid.uuid4().hex[:6]}"
    async with local_harness.worker():
        handle = await local_harness.start(SPEC, run_id=run_id, vars={"root": str(tmp_path), "sleep": "4"})
        activity_id = await running_await(handle, tmp_path)
        target = ("--activity-id", activity_id, "--workflow-id", run_id)
        if action == "reset":
            await temporal(env, "activity", "reset", *target)
        else:
            await temporal(env, "activity", "pause", *target)
            await asyncio.sleep(1)  # paused while the job runs on
            await temporal(env, "activity", "unpause", *target)
        summary = await asyncio.wait_for(handle.result(), 120)
    assert summary.status == "succeeded"
    assert_each_wave_ran_once(tmp_path, run_id)


@pytest.mark.parametrize("reset_type", ["FirstWorkflowTask", "LastWorkflowTask"])
async def test_a_workflow_reset_mid_wave_keeps_each_wave_to_one_run(
    local_harness: Harness, env: WorkflowEnvironment, tmp_path: Path, reset_type: str
) -> None:
    run_id = f"rt-reset-{uuid.uuid4().hex[:6]}"
    local_harness.reconcile_seconds = 0.5  # the reset's old execution ends TERMINATED: its job stays
    async with local_harness.worker():
        handle = await local_harness.start(SPEC, run_id=run_id, vars={"root": str(tmp_path), "sleep": "4"})
        await running_await(handle, tmp_path)
        await temporal(
            env, "workflow", "reset", "--workflow-id", run_id, "--type", reset_type, "--reason", "test"
        )
        newest = local_harness.client.get_workflow_handle(run_id, result_type=RunSummary)
        summary = await asyncio.wait_for(newest.result(), 120)
    assert summary.status == "succeeded"
    assert_each_wave_ran_once(tmp_path, run_id)
