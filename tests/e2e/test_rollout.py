"""A rollout under running runs: b1 runs finish on b1, new runs go to b2 once promoted.

Two worker processes on one task queue, builds b1 (this code) and b2 (this
code plus one replay-incompatible change, tests/integration/b2_code.py), on a
real dev server with Worker Deployments.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import VersioningBehavior
from temporalio.client import WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from activities.backends.local.jobs import SUPERVISOR_FILE
from npaflow.quota.messages import POOL_WORKFLOW_TYPE, pool_workflow_id
from npaflow.runtime.contract import WORKFLOW_TYPE
from npaflow.runtime.request import RunRequest
from npaflow.temporal.deployments import current_build, describe
from npaflow.temporal.helper_runs import helper_attributes
from npaflow.temporal.serving import Build
from tests.harness import Harness, dev_server, start_worker_process
from tests.helpers import ROOT, eventually
from worker.deployment import Deployment
from worker.stranded_runs import stranded_runs

pytestmark = pytest.mark.e2e

B2_CODE = "tests.integration.b2_code"


def cli(
    env: WorkflowEnvironment, code: str, deployment: str, build: str, *args: str
) -> subprocess.CompletedProcess:
    environ = {
        **os.environ,
        "TEMPORAL_ADDRESS": env.client.service_client.config.target_host,
        "NPAFLOW_DEPLOYMENT": deployment,
        "NPAFLOW_BUILD_ID": build,
    }
    command = (
        [sys.executable, "-m", code, *args] if code != "npaflow" else [sys.executable, "-m", "npaflow", *args]
    )
    return subprocess.run(command, cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120)


async def version_of(handle: WorkflowHandle) -> str:
    info = (await handle.describe()).raw_description.workflow_execution_info.versioning_info
    return info.deployment_version.build_id


def jobs_in(home: Path) -> list[str]:
    return sorted(p.name for p in (home / "local" / "jobs").glob("*") if p.is_dir())


async def test_promote_moves_new_runs_to_b2_while_b1_runs_finish_on_b1_with_each_job_launched_once(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    deployment, queue = f"dep-{uuid.uuid4().hex[:6]}", f"tq-{uuid.uuid4().hex[:8]}"
    home_b1, home_b2 = tmp_path / "b1", tmp_path / "b2"
    b1 = start_worker_process(env, home_b1, queue, NPAFLOW_DEPLOYMENT=deployment, NPAFLOW_BUILD_ID="b1")
    b2 = None
    try:
        client = env.client

        async def current() -> str:
            return current_build(await describe(client, deployment))

        await eventually(
            lambda: _equals(current(), "b1"), timeout=60, interval=1, what="b1 current by itself"
        )
        # The b1 runs' first step holds until the release: they are still running at the promote.
        request = local_harness.request(
            "runtime/gated-steps.yaml", vars={"root": str(tmp_path)}, poll_seconds=0.2
        )
        old = [
            await client.start_workflow(WORKFLOW_TYPE, request, id=f"rollout-old-{i}", task_queue=queue)
            for i in range(3)
        ]
        await eventually(lambda: _launched(home_b1, 3), timeout=60, interval=0.5, what="the b1 runs launched")
        b2 = start_worker_process(
            env, home_b2, queue, module=B2_CODE, NPAFLOW_DEPLOYMENT=deployment, NPAFLOW_BUILD_ID="b2"
        )
        await eventually(
            lambda: _has_version(client, deployment, "b2"), timeout=60, interval=1, what="b2 polling"
        )
        promoted = cli(env, B2_CODE, deployment, "b2", "deployment", "promote", "b2")
        assert promoted.returncode == 0, promoted.stderr
        assert "stay on the build that started them" in promoted.stdout, promoted.stderr
        (tmp_path / "release").touch()
        new = await client.start_workflow(WORKFLOW_TYPE, request, id="rollout-new", task_queue=queue)
        results = await asyncio.wait_for(asyncio.gather(*(h.result() for h in [*old, new])), 120)
        assert [r["status"] for r in results] == ["succeeded"] * 4
        assert [await version_of(h) for h in old] == ["b1"] * 3
        assert await version_of(new) == "b2"
        assert len(jobs_in(home_b1)) == 9 and len(jobs_in(home_b2)) == 3  # 3 waves a run, once each
        status = cli(env, "npaflow", deployment, "b1", "deployment", "status", "--json")
        assert status.returncode == 0, status.stderr
        views = {v["build_id"]: v for v in json.loads(status.stdout)["versions"]}
        assert views["b2"]["status"] == "current" and views["b1"]["status"] == "drained"
        assert views["b1"]["open_runs"] == 0 and views["b1"]["polling"] is True
        flagged = cli(
            env, B2_CODE, deployment, "b2", "replay-check", "--query", "WorkflowId STARTS_WITH 'rollout-old'"
        )
        assert flagged.returncode == 1, flagged.stdout + flagged.stderr
        assert "replayed 3 histories: 3 failed" in flagged.stdout
        clean = cli(
            env,
            "npaflow",
            deployment,
            "b1",
            "replay-check",
            "--query",
            "WorkflowId STARTS_WITH 'rollout-old'",
        )
        assert clean.returncode == 0, clean.stdout + clean.stderr
    finally:
        for process in (b1, b2):
            if process is not None:
                process.terminate()
                process.wait(timeout=30)


async def _equals(value, expected: str) -> bool:  # type: ignore[no-untyped-def]
    return (await value) == expected


def _launched(home: Path, count: int) -> bool:
    return len(jobs_in(home)) >= count


async def _has_version(client, deployment: str, build: str) -> bool:  # type: ignore[no-untyped-def]
    described = await describe(client, deployment)
    return described is not None and any(
        s.deployment_version.build_id == build for s in described.worker_deployment_info.version_summaries
    )


FAILING = """\
apiVersion: npa.workflow/v0.0.1
kind: Workflow
metadata: {name: fails-on-b1}
states:
  train: {run: {shell: "echo loss-went-nan; exit 3"}, terminal: true}
"""


async def test_an_ended_run_s_logs_and_status_read_after_its_version_is_retired(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    """The run is pinned to b1; once b1's workers are gone no one answers its query, but its ledger
    still names its jobs, the same host's b2 worker reads their logs, and the summary it ended
    with still shows its waves."""
    deployment, queue = f"dep-{uuid.uuid4().hex[:6]}", f"tq-{uuid.uuid4().hex[:8]}"
    same_host = {"NPAFLOW_DEPLOYMENT": deployment, "NPAFLOW_WORKER_ID": "host-1"}
    b1 = start_worker_process(env, tmp_path, queue, **same_host, NPAFLOW_BUILD_ID="b1")
    try:
        handle = await env.client.start_workflow(
            WORKFLOW_TYPE, local_harness.request(FAILING), id="retired-b1", task_queue=queue
        )
        assert (await local_harness.finish(handle)).status == "failed"
    finally:
        b1.terminate()
        b1.wait(timeout=30)
    b2 = start_worker_process(env, tmp_path, queue, **same_host, NPAFLOW_BUILD_ID="b2")
    try:
        await eventually(
            lambda: _has_version(env.client, deployment, "b2"), timeout=60, interval=1, what="b2 polling"
        )
        promoted = cli(env, "npaflow", deployment, "b2", "deployment", "promote", "b2")
        assert promoted.returncode == 0, promoted.stdout + promoted.stderr
        logs = cli(
            env, "npaflow", deployment, "b2", "logs", "retired-b1", "--state", "train", "--task-queue", queue
        )
        assert logs.returncode == 0, logs.stderr
        assert "loss-went-nan" in logs.stdout and "(failed)" in logs.stdout
        status = cli(env, "npaflow", deployment, "b2", "status", "retired-b1", "--json")
        assert status.returncode == 0, status.stderr
        shown = json.loads(status.stdout)
        assert shown["phase"] == "failed" and [w["states"] for w in shown["waves"]] == [["train"]]
        assert await version_of(handle) == "b1"
    finally:
        b2.terminate()
        b2.wait(timeout=30)


SLOW = """\
apiVersion: npa.workflow/v0.0.1
kind: Workflow
metadata: {name: slow}
initial: wait
states:
  wait: {run: {shell: "sleep 4"}, terminal: true}
"""


#: A server that forgets a killed worker's polls within seconds (by default it lists them 5 minutes).
QUICK_POLLER_HISTORY = (
    "--dynamic-config-value",
    'matching.PollerHistoryTTL="10s"',
    "--dynamic-config-value",
    'matching.longPollExpirationInterval="3s"',
)


async def test_status_list_and_a_starting_dev_worker_name_the_missing_build_a_pinned_run_waits_for(
    tmp_path: Path,
) -> None:
    """The run is pinned to b1; with b1's worker gone and b2's polling, it waits with no error
    anywhere, so status and a dev worker's start say which build it waits for; it finishes once
    b1 is back."""
    deployment, queue = f"dep-{uuid.uuid4().hex[:6]}", f"tq-{uuid.uuid4().hex[:8]}"
    same_host = {"NPAFLOW_DEPLOYMENT": deployment, "NPAFLOW_WORKER_ID": "host-1"}
    env = await dev_server(*QUICK_POLLER_HISTORY)
    b1 = b2 = start_worker_process(env, tmp_path, queue, **same_host, NPAFLOW_BUILD_ID="b1")
    try:
        request = RunRequest(spec=SLOW, poll_seconds=0.3)
        handle = await env.client.start_workflow(WORKFLOW_TYPE, request, id="pinned-b1", task_queue=queue)
        supervised = tmp_path / "local" / "jobs" / "host-1-1" / SUPERVISOR_FILE
        await eventually(supervised.exists, timeout=60, what="the job running on b1")
        b1.kill()
        b1.wait(timeout=30)
        b2 = start_worker_process(env, tmp_path / "b2", queue, **same_host, NPAFLOW_BUILD_ID="b2")
        waiting = f"waiting: no worker of build {deployment}:b1 polls task queue '{queue}'"

        def status_says_so() -> bool:
            status = cli(env, "npaflow", deployment, "b2", "status", handle.id)
            return waiting in status.stdout

        await eventually(status_says_so, timeout=60, interval=2, what="status naming b1")
        listed = json.loads(cli(env, "npaflow", deployment, "b2", "list", "--json").stdout)
        assert [row.get("no_worker") for row in listed if row["run_id"] == handle.id] == [waiting[9:]]
        stranded = await stranded_runs(env.client, Deployment(deployment, "b2"), queue)
        assert stranded == {Build(deployment, "b1"): [handle.id]}
        b1 = start_worker_process(env, tmp_path, queue, **same_host, NPAFLOW_BUILD_ID="b1")
        assert (await asyncio.wait_for(handle.result(), 60))["status"] == "succeeded"
    finally:
        for worker in (b1, b2):
            worker.terminate()
            worker.wait(timeout=30)
        await env.shutdown()
    assert len(jobs_in(tmp_path)) == 1


async def test_a_worker_of_another_deployment_refuses_the_queue_and_runs_keep_flowing_to_its_owner(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    owner, queue = f"dep-{uuid.uuid4().hex[:6]}", f"tq-{uuid.uuid4().hex[:8]}"
    worker = start_worker_process(env, tmp_path / "a", queue, NPAFLOW_DEPLOYMENT=owner, NPAFLOW_BUILD_ID="a1")
    try:

        async def current() -> str:
            return current_build(await describe(env.client, owner))

        await eventually(lambda: _equals(current(), "a1"), timeout=60, interval=1, what="a1 current")
        typo = start_worker_process(env, tmp_path / "b", queue, NPAFLOW_DEPLOYMENT=f"{owner}x")
        assert typo.wait(timeout=60) == 2
        log = (tmp_path / "b" / "worker.log").read_text()
        assert f"task queue '{queue}' sends its runs to Worker Deployment '{owner}'" in log
        handle = await env.client.start_workflow(
            WORKFLOW_TYPE, local_harness.request(FAILING), id="owner-still-serves", task_queue=queue
        )
        assert (await local_harness.finish(handle)).status == "failed"  # a worker ran it to its end
        assert await version_of(handle) == "a1"
    finally:
        worker.terminate()
        worker.wait(timeout=30)


async def _pinned_pool_on_b1(env: WorkflowEnvironment, pool: str, queue: str) -> None:
    """A pool as npaflow started them before they auto-upgraded: pinned by b1's workers' default."""
    handle = await env.client.start_workflow(
        POOL_WORKFLOW_TYPE,
        None,
        id=pool_workflow_id(pool),
        task_queue=queue,
        search_attributes=helper_attributes(),
    )

    async def pinned_to_b1() -> bool:
        info = (await handle.describe()).raw_description.workflow_execution_info.versioning_info
        return (
            info.behavior == VersioningBehavior.VERSIONING_BEHAVIOR_PINNED
            and await version_of(handle) == "b1"
        )

    await eventually(pinned_to_b1, timeout=60, interval=1, what="the pool pinned to b1")


@pytest.mark.parametrize("made_by", ["quota set", "an npaflow that pinned pools"])
async def test_a_quota_pool_made_on_b1_is_served_by_b2_after_the_promote_and_b1_retired(
    env: WorkflowEnvironment, tmp_path: Path, made_by: str
) -> None:
    deployment, queue = f"dep-{uuid.uuid4().hex[:6]}", f"tq-{uuid.uuid4().hex[:8]}"
    pool = f"pool-{uuid.uuid4().hex[:6]}"
    quota = ("quota", "set", pool, "--task-queue", queue, "--json", "--gpus")
    b1 = start_worker_process(
        env, tmp_path / "b1", queue, NPAFLOW_DEPLOYMENT=deployment, NPAFLOW_BUILD_ID="b1"
    )
    b2 = None
    try:
        await eventually(
            lambda: _equals(current_build_of(env, deployment), "b1"),
            timeout=60,
            interval=1,
            what="b1 current",
        )
        if made_by == "quota set":
            created = cli(env, "npaflow", deployment, "b1", *quota, "4")
            assert created.returncode == 0, created.stderr
        else:
            await _pinned_pool_on_b1(env, pool, queue)
        b2 = start_worker_process(
            env, tmp_path / "b2", queue, NPAFLOW_DEPLOYMENT=deployment, NPAFLOW_BUILD_ID="b2"
        )
        await eventually(
            lambda: _has_version(env.client, deployment, "b2"), timeout=60, interval=1, what="b2 polling"
        )
        promoted = cli(env, "npaflow", deployment, "b2", "deployment", "promote", "b2")
        assert promoted.returncode == 0, promoted.stderr
        b1.terminate()
        b1.wait(timeout=30)
        changed = cli(env, "npaflow", deployment, "b2", *quota, "6")
        served_by = await version_of(env.client.get_workflow_handle(f"npaflow-quota-{pool}"))
    finally:
        for process in (b1, b2):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(timeout=30)
        await env.client.get_workflow_handle(f"npaflow-quota-{pool}").terminate("test over")
    assert changed.returncode == 0, changed.stderr
    assert json.loads(changed.stdout)[0]["config"]["gpus"] == 6 and served_by == "b2"


async def current_build_of(env: WorkflowEnvironment, deployment: str) -> str:
    return current_build(await describe(env.client, deployment))


async def test_a_new_run_whose_current_build_has_no_worker_names_the_build_to_promote_and_runs_once_promoted(
    tmp_path: Path,
) -> None:
    """b1 is current but its worker is gone; b2 (not promoted) polls: a new run starts on b1, so it
    waits; status and list say so and name b2 to promote, and it runs on b2 once promoted."""
    deployment, queue = f"dep-{uuid.uuid4().hex[:6]}", f"tq-{uuid.uuid4().hex[:8]}"
    env = await dev_server(*QUICK_POLLER_HISTORY)
    b1 = b2 = start_worker_process(env, tmp_path, queue, NPAFLOW_DEPLOYMENT=deployment, NPAFLOW_BUILD_ID="b1")
    try:
        await eventually(
            lambda: _equals(current_build_of(env, deployment), "b1"), timeout=60, what="b1 current"
        )
        b1.kill()
        b1.wait(timeout=30)
        b2 = start_worker_process(
            env, tmp_path / "b2", queue, NPAFLOW_DEPLOYMENT=deployment, NPAFLOW_BUILD_ID="b2"
        )
        await eventually(lambda: _has_version(env.client, deployment, "b2"), timeout=60, what="b2 polling")
        request = RunRequest(spec=SLOW, poll_seconds=0.3)
        handle = await env.client.start_workflow(WORKFLOW_TYPE, request, id="new-on-b1", task_queue=queue)
        waiting = (
            f"waiting: new runs on task queue '{queue}' start on build {deployment}:b1, the deployment's "
            "current version, and no worker of it polls; workers of build b2 do: promote one "
            "(`npaflow deployment promote b2`"
        )

        def status_says_so() -> str | None:
            status = cli(env, "npaflow", deployment, "b2", "status", handle.id).stdout
            return status if waiting in status else None

        status = await eventually(status_says_so, timeout=90, interval=2, what="status naming b2 to promote")
        listed = json.loads(cli(env, "npaflow", deployment, "b2", "list", "--json").stdout)
        promoted = cli(env, "npaflow", deployment, "b2", "deployment", "promote", "b2", "--task-queue", queue)
        assert promoted.returncode == 0, promoted.stderr
        assert (await asyncio.wait_for(handle.result(), 60))["status"] == "succeeded"
        ran_on = await version_of(handle)
    finally:
        for worker in (b1, b2):
            worker.terminate()
            worker.wait(timeout=30)
        await env.shutdown()
    assert status.startswith("run new-on-b1: starting (Temporal: RUNNING)"), status
    (row,) = [row for row in listed if row["run_id"] == handle.id]
    assert row["no_worker"] == "no worker of the current build polls its queue (promote the new build)"
    assert ran_on == "b2"
