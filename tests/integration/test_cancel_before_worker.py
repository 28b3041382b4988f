"""A run cancelled before any worker picked it up launches nothing, and still leaves a ledger.

Five runs are cancelled while no worker polls their task queue (by `npaflow
cancel`, by `temporal workflow cancel`, by both, through the SDK's cancel and the
`cancel` signal); then a worker starts. None may launch a job: on SkyPilot that
would provision a cluster for a run cancelled minutes earlier.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest
from temporalio.client import WorkflowExecutionStatus, WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from tests.harness import ROOT, TEMPORAL_BIN, Harness
from tests.helpers import eventually

pytestmark = pytest.mark.integration

SPEC = "runtime/marker-steps.yaml"


async def cli(*args: str) -> str:
    """Run a command without blocking the test's event loop; return its stdout."""
    process = await asyncio.create_subprocess_exec(
        *args, cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, (args, out.decode(), err.decode())
    return out.decode()


async def cancel(env: WorkflowEnvironment, handle: WorkflowHandle, how: str) -> str:
    address = env.client.service_client.config.target_host
    said = ""
    if how in ("npaflow", "both"):
        said = await cli(str(TEMPORAL_BIN.parent / "npaflow"), "cancel", handle.id, "--address", address)
    if how in ("temporal", "both"):
        await cli(str(TEMPORAL_BIN), "workflow", "cancel", "--workflow-id", handle.id, "--address", address)
    if how == "sdk":
        await handle.cancel()
    if how == "signal":
        await handle.signal("cancel", "changed my mind")
    return said


async def test_runs_cancelled_before_any_worker_polls_launch_nothing_and_record_the_cancel(
    local_harness: Harness, env: WorkflowEnvironment, tmp_path: Path
) -> None:
    ways = ["npaflow", "temporal", "both", "sdk", "signal"]
    handles = {
        how: await local_harness.start(
            SPEC, run_id=f"rt-early-{how}-{uuid.uuid4().hex[:6]}", vars={"root": str(tmp_path)}
        )
        for how in ways
    }
    said = {how: await cancel(env, handle, how) for how, handle in handles.items()}
    assert "no worker polls task queue" in said["npaflow"] and "nothing will launch" in said["npaflow"]
    async with local_harness.worker():
        for handle in handles.values():

            async def closed(handle: WorkflowHandle = handle) -> bool:
                return (await handle.describe()).status == WorkflowExecutionStatus.CANCELED

            await eventually(closed, timeout=60, what=f"{handle.id} cancelled")
    jobs = local_harness.home / "local" / "jobs"
    assert not list(jobs.glob("*/job.json")), "a job was launched for a cancelled run"
    assert not list(tmp_path.glob("*/slow.started"))
    for handle in handles.values():
        ledger = json.loads(
            (local_harness.home / "runs" / handle.id / "npa-workflow" / "runtime.json").read_text()
        )
        assert ledger["status"] == "cancelled" and ledger["waves"] == []
