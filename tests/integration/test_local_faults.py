"""Faults through the real workflow on the local backend: no ghost, orphan or leaked job.

Workers, supervisors and S3 are killed at chosen moments; each test says what
the run does about it and checks that at most one attempt's processes were ever
alive at once.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from pathlib import Path

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.testing import WorkflowEnvironment

from activities.backends.local import LocalBackend
from activities.backends.local.jobs import (
    JOB_FILE,
    SUPERVISOR_FILE,
    LocalJobRecord,
    SupervisorIdentity,
    job_marker,
    job_processes,
    read_model,
    write_model,
)
from activities.runs import read_ledger
from activities.storage import S3Storage, StorageRouter
from npaflow.runtime.request import RunRequest
from tests.harness import SPECS, WORKER_ID, Harness, replaced_worker, start_worker_process
from tests.held_port import HeldPort
from tests.helpers import eventually
from tests.integration.stalling_launch_worker import STALL_MARKER
from tests.s3_server import BUCKET, CREDENTIALS, S3Server
from worker.main import running_workers
from workflows_def import NpaWorkflowRun

pytestmark = pytest.mark.integration


def jobs_of(home: Path) -> dict[str, LocalJobRecord]:
    """Every local job record under a worker home, by job id."""
    records = (read_model(path, LocalJobRecord) for path in (home / "local" / "jobs").glob(f"*/{JOB_FILE}"))
    return {record.job_id: record for record in records if record is not None}


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


async def test_a_worker_killed_inside_launch_wave_is_replaced_within_two_minutes_with_one_job(
    env: WorkflowEnvironment, home: Path, tmp_path: Path
) -> None:
    task_queue = f"tq-launchkill-{uuid.uuid4().hex[:6]}"
    stalling = start_worker_process(env, home, task_queue, module="tests.integration.stalling_launch_worker")
    request = RunRequest(
        spec=(SPECS / "runtime/local-exclusive.yaml").read_text(),
        poll_seconds=0.2,
        vars={"root": str(tmp_path), "sleep": "1"},
    )
    handle = await env.client.start_workflow(
        NpaWorkflowRun.run, request, id="rt-launchkill", task_queue=task_queue
    )
    marker = await eventually(
        lambda: (home / STALL_MARKER).exists() and home / STALL_MARKER,
        timeout=60,
        what="the launch stalled after submitting",
    )
    stalled_job = marker.read_text()
    killed_at = time.monotonic()
    async with replaced_worker(stalling, env, home, task_queue):
        summary = await asyncio.wait_for(handle.result(), timeout=120)
    assert summary.status == "succeeded"
    assert time.monotonic() - killed_at < 120
    (wave,) = summary.waves
    assert wave.attempt == 1 and wave.job_id == stalled_job and wave.adopted
    assert list(jobs_of(home)) == [stalled_job]


async def test_a_ghost_record_fails_the_attempt_as_controller_lost_and_is_never_adopted(
    env: WorkflowEnvironment, home: Path, tmp_path: Path
) -> None:
    ghostly = LocalBackend(home, WORKER_ID, supervisor_command=["true"])  # exits before recording
    harness = Harness(env.client, home, ghostly, f"tq-ghost-{uuid.uuid4().hex[:6]}")
    started = time.monotonic()
    outcome = await harness.run(
        "runtime/single.yaml", vars={"root": str(tmp_path)}, poll_seconds=1, max_infrastructure_recoveries=1
    )
    assert outcome.status == "failed" and "never started" in outcome.error
    assert outcome.ledger is not None
    attempts = [(w.attempt, w.job_id, w.error_category, w.adopted) for w in outcome.ledger.waves]
    assert attempts == [
        (1, f"{WORKER_ID}-1", "controller", False),
        (2, f"{WORKER_ID}-2", "controller", False),
    ]
    assert time.monotonic() - started < 30  # found within a poll or two, not max_wait_seconds


async def test_a_killed_supervisor_has_its_job_killed_before_the_retry_starts(
    local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        handle = await local_harness.start(
            "runtime/local-exclusive.yaml",
            run_id="rt-orphan",
            vars={"root": str(tmp_path), "sleep": "60"},
            poll_seconds=0.5,
        )
        pid_file = tmp_path / "rt-orphan" / "pid"
        await eventually(pid_file.exists, what="the first attempt runs")
        first_pid = int(pid_file.read_text())
        job_dir = local_harness.home / "local" / "jobs" / f"{WORKER_ID}-1"
        supervisor = read_model(job_dir / SUPERVISOR_FILE, SupervisorIdentity)
        assert supervisor is not None
        os.kill(supervisor.pid, signal.SIGKILL)  # as an OOM kill would
        outcome = await local_harness.finish(handle)
    assert outcome.status == "succeeded"
    assert not (tmp_path / "rt-orphan" / "clash").exists(), "two attempts were alive at once"
    assert not alive(first_pid)
    assert outcome.ledger is not None
    first, second = outcome.ledger.waves
    assert (first.attempt, first.error_category) == (1, "controller") and "died" in first.error
    assert (second.attempt, second.status) == (2, "succeeded")
    assert job_processes(job_marker(local_harness.home / "local" / "jobs", f"{WORKER_ID}-1")) == []


async def test_cancelling_a_job_whose_record_lacks_a_pid_verifies_only_once_its_processes_are_gone(
    local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        handle = await local_harness.start(
            "runtime/local-exclusive.yaml",
            run_id="rt-nopid",
            vars={"root": str(tmp_path), "sleep": "60"},
            poll_seconds=30,
        )  # no poll between the edit and the cancel
        pid_file = tmp_path / "rt-nopid" / "pid"
        await eventually(pid_file.exists, what="the job runs")
        job_id = f"{WORKER_ID}-1"
        job_dir = local_harness.home / "local" / "jobs" / job_id
        record = read_model(job_dir / JOB_FILE, LocalJobRecord)
        assert record is not None
        write_model(job_dir / JOB_FILE, record.model_copy(update={"supervisor_pid": 0}))
        (job_dir / SUPERVISOR_FILE).unlink()
        marker = job_marker(local_harness.home / "local" / "jobs", job_id)
        assert job_processes(marker)
        await handle.cancel()
        with pytest.raises(WorkflowFailureError):
            await handle.result()
    ledger = await read_ledger(StorageRouter(), f"file://{local_harness.home}/runs/rt-nopid")
    assert ledger is not None and ledger.status == "cancelled"
    (wave,) = ledger.waves
    assert wave.cancellation.state == "verified"
    assert job_processes(marker) == [] and not alive(int(pid_file.read_text()))


async def test_a_job_cannot_read_a_worker_only_environment_variable(
    env: WorkflowEnvironment, home: Path, tmp_path: Path
) -> None:
    task_queue = f"tq-env-{uuid.uuid4().hex[:6]}"
    worker = start_worker_process(
        env,
        home,
        task_queue,
        NPAFLOW_TEST_WORKER_ONLY="worker-secret",
        AWS_SECRET_ACCESS_KEY="worker-aws-key",
    )
    spec = (
        (SPECS / "runtime/single.yaml")
        .read_text()
        .replace(
            "run: {shell: echo work}",
            "run: {shell: 'mkdir -p {{config.root}}/{{run.id}} && "
            "env > {{config.root}}/{{run.id}}/out.json'}",
        )
    )
    try:
        handle = await env.client.start_workflow(
            NpaWorkflowRun.run,
            RunRequest(spec=spec, poll_seconds=0.2, vars={"root": str(tmp_path)}),
            id="rt-env",
            task_queue=task_queue,
        )
        summary = await asyncio.wait_for(handle.result(), timeout=60)
    finally:
        worker.terminate()
        worker.wait()
    assert summary.status == "succeeded"
    seen = (tmp_path / "rt-env" / "out.json").read_text()
    assert "worker-secret" not in seen and "worker-aws-key" not in seen
    assert "NPA_WORKFLOW_STATE=work" in seen


async def test_a_run_waits_out_a_two_minute_s3_outage_after_a_launch_and_writes_its_ledger(
    env: WorkflowEnvironment, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in CREDENTIALS.items():
        monkeypatch.setenv(key, value)
    server = S3Server(tmp_path / "seaweedfs")
    server.start()
    door = HeldPort(lambda: server.address)  # the endpoint the workers use, held through the outage
    await door.open()
    try:
        root = f"s3://{BUCKET}/outage"
        harness = Harness(
            env.client,
            home,
            LocalBackend(home, WORKER_ID),
            f"tq-outage-{uuid.uuid4().hex[:6]}",
            StorageRouter(S3Storage(door.endpoint)),
        )
        context = harness.context()
        context.ledger_root = root
        async with running_workers(env.client, context):
            handle = await harness.start(
                "runtime/local-steps.yaml",
                run_id="rt-outage",
                vars={"root": str(tmp_path), "sleep": "5"},
                poll_seconds=0.5,
                transport_recovery_seconds=30,  # the ledger waits out 180 s
            )
            jobs = home / "local" / "jobs"
            await eventually(
                lambda: (jobs / f"{WORKER_ID}-2" / SUPERVISOR_FILE).exists(), what="the second wave launched"
            )
            await door.shut()
            server.stop()
            down_at = time.monotonic()
            await asyncio.sleep(120)
            server.start()  # on other ports if one was taken meanwhile; the door forwards there
            await door.open()
            summary = await asyncio.wait_for(handle.result(), timeout=120)
        assert summary.status == "succeeded"
        assert time.monotonic() - down_at >= 120
        ledger = await read_ledger(StorageRouter(S3Storage(door.endpoint)), f"{root}/rt-outage")
        assert ledger is not None and ledger.status == "succeeded"
        assert [(w.states, w.attempt) for w in ledger.waves] == [(["first"], 1), (["slow"], 1), (["last"], 1)]
        assert len(jobs_of(home)) == 3
    finally:
        await door.close()
        server.stop()
