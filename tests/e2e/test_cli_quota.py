"""`npaflow quota` end to end, and submit's arithmetic check (issue 31)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from temporalio import workflow
from temporalio.client import WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from npaflow.quota import PoolConfig, PoolStatus
from npaflow.quota.messages import POOL_WORKFLOW_TYPE, pool_workflow_id
from npaflow.temporal.helper_runs import helper_attributes
from tests.e2e.test_cli_runs import npaflow
from tests.harness import Harness
from tests.helpers import eventually
from worker.metrics import pool_statuses

pytestmark = pytest.mark.e2e


def sweep_spec(tmp_path: Path, members: int, concurrency: int) -> Path:
    """A parallel group of 8-GPU members, `concurrency` at a time."""
    names = [f"m{i}" for i in range(members)]
    doc = {
        "apiVersion": "npa.workflow/v0.0.1",
        "kind": "Workflow",
        "metadata": {"name": "sweep"},
        "resources": {"gpu": {"accelerators": "H100:8"}},
        "initial": "sweep",
        "states": {
            "sweep": {"parallel": names, "maxConcurrency": concurrency, "next": "done"},
            **{name: {"run": {"shell": "true"}, "resources": "gpu"} for name in names},
            "done": {"run": {"shell": "true"}, "terminal": True},
        },
    }
    path = tmp_path / "sweep.yaml"
    path.write_text(json.dumps(doc))
    return path


async def test_quota_set_status_list_and_delete_and_submit_refuses_a_wave_the_pool_cannot_hold(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        created = await npaflow(
            env, local_harness, "quota", "set", "gpu16", "--gpus", "16", "--team", "research=2"
        )
        too_wide = await npaflow(
            env,
            local_harness,
            "submit",
            str(sweep_spec(tmp_path, 3, 3)),
            "--run-id",
            "q-wide",
            "--quota-pool",
            "gpu16",
        )
        fits = await npaflow(
            env,
            local_harness,
            "submit",
            str(sweep_spec(tmp_path, 3, 2)),
            "--run-id",
            "q-fits",
            "--quota-pool",
            "gpu16",
            "--team",
            "research",
            "--wait",
            "--poll-seconds",
            "0.2",
        )
        unknown = await npaflow(
            env, local_harness, "submit", str(sweep_spec(tmp_path, 1, 1)), "--quota-pool", "nope"
        )
        bad = await npaflow(env, local_harness, "quota", "set", "Bad Pool", "--gpus", "4")
        bad_team = await npaflow(
            env, local_harness, "submit", str(sweep_spec(tmp_path, 1, 1)), "--team", "Bad Team"
        )
        status = await npaflow(env, local_harness, "quota", "status", "gpu16")
        for _ in range(50):  # `quota list` reads visibility, which follows a new pool within seconds
            listed = await npaflow(env, local_harness, "quota", "list")
            if "gpu16:" in listed.stdout:
                break
            await asyncio.sleep(0.2)
        deleted = await npaflow(env, local_harness, "quota", "delete", "gpu16")
        gone = await npaflow(env, local_harness, "quota", "status", "gpu16")
    assert created.returncode == 0, created.stderr
    assert "quota pool gpu16: 0 of 16 GPUs in use" in created.stdout
    assert listed.stdout.strip() == "gpu16: 0 of 16 GPUs in use, 0 GPUs waiting (0 runs)", listed.stderr
    assert too_wide.returncode == 2, too_wide.stderr
    assert "quota pool gpu16 holds 16 GPUs; nothing was started" in too_wide.stderr
    assert "required 24, available 16, shortfall 8" in too_wide.stderr
    with pytest.raises(Exception, match="not found"):
        await env.client.get_workflow_handle("q-wide").describe()
    assert fits.returncode == 0, fits.stderr + fits.stdout
    assert unknown.returncode == 2 and "no quota pool 'nope'" in unknown.stderr
    assert bad.returncode == 2 and "quota pool 'Bad Pool' must be" in bad.stderr
    assert bad_team.returncode == 2 and "--team: team 'Bad Team' must be" in bad_team.stderr
    assert "team research (weight 2): 0 GPUs in use, 0 GPUs waiting (0 runs)" in status.stdout
    assert deleted.returncode == 0 and gone.returncode == 2 and "no quota pool 'gpu16'" in gone.stderr
    assert "Traceback" not in too_wide.stderr + unknown.stderr + bad.stderr + gone.stderr


async def test_a_pool_no_worker_serves_is_named_at_once_by_status_and_list_instead_of_hanging_them(
    env: WorkflowEnvironment, local_harness: Harness
) -> None:
    pool = f"orphan-{local_harness.task_queue}"
    handle = await env.client.start_workflow(
        POOL_WORKFLOW_TYPE,
        id=pool_workflow_id(pool),
        task_queue=f"{local_harness.task_queue}-nobody",
        search_attributes=helper_attributes(),
    )
    try:
        status = await npaflow(env, local_harness, "quota", "status", pool)
        for _ in range(50):  # `quota list` reads visibility, which follows a new pool within seconds
            listed = await npaflow(env, local_harness, "quota", "list")
            if pool in listed.stderr:
                break
            await asyncio.sleep(0.2)
    finally:
        await handle.terminate("test over")
    assert status.returncode == 2, status.stdout
    assert f"quota pool {pool}: no worker polls its task queue" in status.stderr
    assert "Traceback" not in status.stderr
    assert listed.returncode == 0 and f"warning: quota pool {pool}: no worker polls" in listed.stderr


async def test_quota_set_with_no_worker_on_the_queue_says_so_instead_of_hanging(
    env: WorkflowEnvironment, local_harness: Harness
) -> None:
    pool = f"unserved-{local_harness.task_queue}"
    queue = f"{local_harness.task_queue}-nobody"
    try:
        created = await npaflow(
            env, local_harness, "quota", "set", pool, "--gpus", "4", "--task-queue", queue, timeout=60
        )
    finally:
        await env.client.get_workflow_handle(pool_workflow_id(pool)).terminate("test over")
    assert created.returncode == 2, created.stdout
    assert f"quota pool {pool}: no worker polls its task queue '{queue}'" in created.stderr
    assert "Traceback" not in created.stderr


@workflow.defn(name="NotAQuotaPool")
class NotAQuotaPool:
    """What a worker registers whose task queue a pool landed on: it cannot run the pool's tasks."""

    @workflow.run
    async def run(self) -> None:
        return None


async def task_failed(handle: WorkflowHandle) -> bool:
    """The worker failed the pool's task (it has no such type): queries are refused now."""
    try:
        await asyncio.wait_for(handle.query("status"), 2)
    except RPCError as error:
        return error.status is RPCStatusCode.FAILED_PRECONDITION
    except TimeoutError:
        return False
    return False


async def test_a_pool_whose_workflow_task_fails_is_named_as_unanswering_never_as_missing(
    env: WorkflowEnvironment, local_harness: Harness
) -> None:
    pool, queue = f"stuck-{local_harness.task_queue}", f"{local_harness.task_queue}-other"
    handle = await env.client.start_workflow(
        POOL_WORKFLOW_TYPE, id=pool_workflow_id(pool), task_queue=queue, search_attributes=helper_attributes()
    )
    remembered = PoolStatus(pool=pool, config=PoolConfig(gpus=8), in_use=0)
    try:
        runner = UnsandboxedWorkflowRunner()
        async with Worker(env.client, task_queue=queue, workflows=[NotAQuotaPool], workflow_runner=runner):
            await eventually(lambda: task_failed(handle), what="the pool's task failed")
            status = await npaflow(env, local_harness, "quota", "status", pool)
            kept = await pool_statuses(env.client, {pool: remembered})
    finally:
        await handle.terminate("test over")
    assert status.returncode == 2 and "no quota pool" not in status.stderr
    assert f"quota pool {pool} cannot answer: " in status.stderr and "Traceback" not in status.stderr
    assert kept[pool] == remembered  # the gauges keep its last status, so its waiters can still alert


async def test_submit_warns_when_its_pool_counts_a_type_no_wave_of_the_run_holds(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        await npaflow(env, local_harness, "quota", "set", "a100s", "--gpus", "16", "--accelerator", "A100")
        await npaflow(env, local_harness, "quota", "set", "h100s", "--gpus", "16", "--accelerator", "h100")
        spec = str(sweep_spec(tmp_path, 2, 2))
        other = await npaflow(
            env, local_harness, "submit", spec, "--run-id", "q-a100", "--quota-pool", "a100s"
        )
        same = await npaflow(
            env, local_harness, "submit", spec, "--run-id", "q-h100", "--quota-pool", "h100s"
        )
    assert other.returncode == 0 and same.returncode == 0, other.stderr + same.stderr
    assert (
        "npaflow: warning: quota pool a100s counts only A100 GPUs and no wave of this run holds any "
        "(it holds H100): the pool does not limit this run" in other.stderr
    )
    assert "warning" not in same.stderr
