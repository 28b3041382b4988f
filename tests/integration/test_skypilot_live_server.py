"""The skypilot backend against real SkyPilot API servers (consolidation mode, no cloud).

Every test runs against each supported server release (the pinned one and the
oldest, tests/skypilot_releases.py) with the pinned SDK in the worker. Launch,
queue, cancel and logs are real; every launch ends FAILED_PRECHECKS for lack of
a cloud. Jobs are counted in the server's own queue.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.client import WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

from activities.backends.skypilot import QUEUE_FIELDS
from activities.backends.skypilot_sdk import SkyPilotSdk
from npaflow.runtime.contract import LAUNCHES_DIR
from npaflow.runtime.status import FailureClass, JobStatus
from npaflow.runtime.vocabulary import CancellationState, WaveStatus
from tests.e2e.test_cli_runs import npaflow
from tests.harness import Harness, replaced_worker, running_sky_server, start_worker_process
from tests.helpers import eventually
from tests.skypilot_releases import installed_version, server_versions
from tests.skypilot_server import SkyApiServer

pytestmark = [pytest.mark.integration, pytest.mark.skypilot_server]

#: A cloud-less server on 2 cores keeps a job STARTING for minutes when ten launch at once:
#: the wave deadline and the transport budget are the server's, not the harness's.
SKY = {"backend": "skypilot", "poll_seconds": 0.5, "max_wait_seconds": 600, "transport_recovery_seconds": 120}


@pytest.fixture(scope="module", params=server_versions(), ids=lambda version: f"server-{version}")
def sky_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SkyApiServer]:
    """This module's API server: one per supported release, each for all of the module's tests."""
    yield from running_sky_server(tmp_path_factory, request.param)


async def jobs_named(server: SkyApiServer, name: str) -> list[int]:
    records = await SkyPilotSdk(server.endpoint).queue(job_ids=None, limit=1000, fields=QUEUE_FIELDS)
    return sorted({r.job_id for r in records if r.job_name == name})


def runs_at_once(server: SkyApiServer) -> int:
    """Ten runs against the pinned release (the load); three against the oldest, whose
    concurrent launches must stay apart too but whose ten took three minutes of CI.
    """
    return 10 if server.release == installed_version() else 3


def api_server_processes() -> set[int]:
    """Pids of every SkyPilot API server on the host (an SDK may start one for a local endpoint)."""
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes() if entry.name.isdigit() else b""
        except OSError:
            continue
        if b"sky.server.server" in command:
            found.add(int(entry.name))
    return found


async def launch_receipt(home: Path, run_id: str) -> Path:
    directory = home / "runs" / run_id / "npa-workflow" / LAUNCHES_DIR
    return await eventually(
        lambda: next(iter(directory.glob("*.json")), None), timeout=60, what="the launch request recorded"
    )


async def test_failed_prechecks_fails_as_configuration_after_exactly_one_job(
    env: WorkflowEnvironment, sky_harness: Harness, sky_server: SkyApiServer
) -> None:
    async with sky_harness.worker():
        result = await npaflow(
            env,
            sky_harness,
            "submit",
            "tests/specs/runtime/sky-one.yaml",
            "--run-id",
            "sky-prechecks",
            "--wait",
            "--json",
            "--backend",
            "skypilot",
            "--retries",
            "2",
            "--max-infrastructure-recoveries",
            "2",
            "--poll-seconds",
            "0.5",
        )
    assert result.returncode == 1, result.stderr
    summary = json.loads(result.stdout)
    assert summary["failure_class"] == "configuration"
    (wave,) = (await sky_harness.finish(sky_harness.client.get_workflow_handle("sky-prechecks"))).ledger.waves
    assert await jobs_named(sky_server, wave.job_name) == [int(wave.job_id)]
    assert (wave.sky_status, wave.error_category) == (JobStatus.FAILED_PRECHECKS, FailureClass.CONFIGURATION)
    assert "NoCloudAccessError" in wave.error and wave.request_id


async def test_a_run_cancelled_right_after_launch_ends_cancelled_with_its_job_verified(
    sky_harness: Harness, sky_server: SkyApiServer
) -> None:
    async with sky_harness.worker():
        handle = await sky_harness.start("runtime/sky-one.yaml", run_id="sky-cancel", **SKY)
        await launch_receipt(sky_harness.home, "sky-cancel")
        await handle.cancel()
        outcome = await sky_harness.finish(handle)
    assert (await handle.describe()).status == WorkflowExecutionStatus.CANCELED
    (wave,) = outcome.ledger.waves
    assert wave.status is WaveStatus.CANCELLED
    assert wave.cancellation.state is CancellationState.VERIFIED
    assert wave.sky_status is not None and wave.sky_status.is_terminal()
    assert await jobs_named(sky_server, wave.job_name) == [int(wave.job_id)]


async def test_a_run_terminated_before_its_ledger_named_its_job_gets_a_ledger_from_its_launch_receipt(
    sky_harness: Harness, sky_server: SkyApiServer
) -> None:
    """Terminated while its launch was resolved: no ledger, only the receipt. Its job ends by
    itself (FAILED_PRECHECKS); the ledger sweep finds it by name and token on the real server."""
    from worker.ledger_sweep import LedgerSweep

    sky_harness.reconcile_seconds = 0  # no sweep of the worker's own: this test sweeps
    run_id = f"sky-receipt-{uuid.uuid4().hex[:6]}"  # its reconciler is per run id, on this test's queue
    async with sky_harness.worker():
        handle = await sky_harness.start("runtime/sky-one.yaml", run_id=run_id, **SKY)
        receipt = json.loads((await launch_receipt(sky_harness.home, run_id)).read_text())
        await handle.terminate("test: closed before its first export")
        runtime = sky_harness.home / "runs" / run_id / "npa-workflow" / "runtime.json"
        assert not runtime.exists()
        sweep = LedgerSweep(sky_harness.client, sky_harness.context())
        await eventually(sweep.sweep, timeout=240, interval=2, what="the sweep closing the run")
        await eventually(runtime.exists, timeout=60, what="the ledger written")
    ledger = json.loads(runtime.read_text())
    (wave,) = ledger["waves"]
    assert ledger["status"] == "terminated"
    assert (wave["job_name"], wave["attempt"], wave["sky_status"]) == (
        receipt["job_name"],
        1,
        "FAILED_PRECHECKS",
    )
    assert await jobs_named(sky_server, wave["job_name"]) == [int(wave["job_id"])]


async def test_a_worker_killed_between_launch_request_and_job_id_is_followed_by_an_adoption(
    env: WorkflowEnvironment, sky_harness: Harness, sky_server: SkyApiServer
) -> None:
    queue = f"tq-sky-{uuid.uuid4().hex[:6]}"
    environment = {"NPAFLOW_BACKEND": "skypilot", "SKYPILOT_API_SERVER_ENDPOINT": sky_server.endpoint}
    first = start_worker_process(env, sky_harness.home, queue, **environment)
    handle = await sky_harness.client.start_workflow(
        "NpaWorkflowRun", sky_harness.request("runtime/sky-one.yaml", **SKY), id="sky-crash", task_queue=queue
    )
    await launch_receipt(sky_harness.home, "sky-crash")
    async with replaced_worker(first, env, sky_harness.home, queue, **environment):
        outcome = await asyncio.wait_for(sky_harness.finish(handle), timeout=240)
    (wave,) = outcome.ledger.waves
    assert wave.attempt == 1 and wave.adopted
    assert await jobs_named(sky_server, wave.job_name) == [int(wave.job_id)]
    assert outcome.summary.failure_class is FailureClass.CONFIGURATION


async def test_an_api_server_outage_before_launch_is_waited_out_with_one_job(
    sky_harness: Harness, sky_server: SkyApiServer
) -> None:
    servers_before = api_server_processes()
    async with sky_harness.worker():
        with sky_server.outage():
            handle = await sky_harness.start(
                "runtime/sky-one.yaml",
                run_id=f"sky-outage-{uuid.uuid4().hex[:6]}",
                **{**SKY, "transport_recovery_seconds": 300},
            )
            await asyncio.sleep(25)  # the outage the run must ride out, not a synchronisation
            assert not sky_server.healthy()
            assert api_server_processes() <= servers_before, "a worker must never start an API server itself"
        outcome = await asyncio.wait_for(sky_harness.finish(handle), timeout=240)
    (wave,) = outcome.ledger.waves
    assert wave.attempt == 1
    assert outcome.summary.failure_class is FailureClass.CONFIGURATION
    assert await jobs_named(sky_server, wave.job_name) == [int(wave.job_id)]


async def test_job_logs_are_read_through_the_run_s_backend(
    env: WorkflowEnvironment, sky_harness: Harness
) -> None:
    async with sky_harness.worker():
        await sky_harness.finish(await sky_harness.start("runtime/sky-one.yaml", run_id="sky-logs", **SKY))
        result = await npaflow(env, sky_harness, "logs", "sky-logs", "--tail", "50")
    assert result.returncode == 0, result.stderr
    assert "### 001|serial|:step:- attempt 1 job" in result.stdout
    assert "FAILED_PRECHECKS" in result.stdout and "\x1b[" not in result.stdout


async def test_runs_started_at_once_launch_exactly_one_job_each_and_end_as_configuration_failures(
    sky_harness: Harness, sky_server: SkyApiServer
) -> None:
    count = runs_at_once(sky_server)
    async with sky_harness.worker():
        handles = [
            await sky_harness.start(
                "runtime/sky-one.yaml", run_id=f"sky-many-{index}", max_infrastructure_recoveries=2, **SKY
            )
            for index in range(count)
        ]
        outcomes = await asyncio.wait_for(asyncio.gather(*(sky_harness.finish(h) for h in handles)), 900)
    classes = [o.summary.failure_class for o in outcomes]
    assert classes == [FailureClass.CONFIGURATION] * count, [o.summary.error for o in outcomes]
    for outcome in outcomes:
        (wave,) = outcome.ledger.waves
        assert wave.sky_status is JobStatus.FAILED_PRECHECKS, wave.error
        assert await jobs_named(sky_server, wave.job_name) == [int(wave.job_id)]
