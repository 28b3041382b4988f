"""Scale out: two worker processes on one task queue, as on two hosts, sharing one ledger root.

Each worker has its own `NPAFLOW_HOME` (its own local jobs); ledgers go to the
shared `NPAFLOW_LEDGER_ROOT`. A local job's activities run on its worker's own
queue, so no worker ever reads another host's job.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from activities.backends.local.jobs import JOB_FILE, SUPERVISOR_FILE, LocalJobRecord, read_model
from activities.runs import read_ledger
from activities.storage import StorageRouter
from npaflow.runtime.request import RunRequest
from tests.harness import ROOT, SPECS, start_worker_process
from tests.helpers import eventually
from workflows_def import NpaWorkflowRun

pytestmark = pytest.mark.integration

GATE_LOOP = ROOT / "specs" / "examples" / "gate-loop.yaml"


def worker_id(home: Path) -> str:
    return (home / "worker-id").read_text().strip()


def jobs_in(home: Path) -> list[LocalJobRecord]:
    records = (read_model(p, LocalJobRecord) for p in (home / "local" / "jobs").glob(f"*/{JOB_FILE}"))
    return [record for record in records if record is not None]


def start_workers(
    env: WorkflowEnvironment, homes: list[Path], task_queue: str, ledger_root: str
) -> list[subprocess.Popen[bytes]]:
    return [start_worker_process(env, home, task_queue, NPAFLOW_LEDGER_ROOT=ledger_root) for home in homes]


def stop(workers: list[subprocess.Popen[bytes]]) -> None:
    for worker in workers:
        if worker.poll() is None:
            worker.terminate()
    for worker in workers:
        worker.wait()


async def test_two_workers_run_eight_concurrent_runs_with_one_job_per_attempt_and_shared_ledgers(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    homes = [tmp_path / "host-a", tmp_path / "host-b"]
    shared = tmp_path / "shared-ledgers"
    task_queue = f"tq-scale-{uuid.uuid4().hex[:6]}"
    workers = start_workers(env, homes, task_queue, shared.as_uri())
    run_ids = [f"rt-scale-{i}" for i in range(8)]
    try:
        handles = [
            await env.client.start_workflow(
                NpaWorkflowRun.run,
                RunRequest(
                    spec=GATE_LOOP.read_text(), poll_seconds=0.3, vars={"root": str(tmp_path / "data")}
                ),
                id=run_id,
                task_queue=task_queue,
            )
            for run_id in run_ids
        ]
        summaries = await asyncio.wait_for(asyncio.gather(*(h.result() for h in handles)), 240)
    finally:
        stop(workers)
    assert [s.status for s in summaries] == ["succeeded"] * 8
    jobs = {home.name: jobs_in(home) for home in homes}
    names = [job.job_name for records in jobs.values() for job in records]
    assert len(names) == len(set(names)), "a wave attempt was launched twice"
    owners = {job.job_id: worker_id(home) for home in homes for job in jobs_in(home)}
    for run_id, summary in zip(run_ids, summaries, strict=True):
        ledger = await read_ledger(StorageRouter(), f"{shared.as_uri()}/{run_id}")
        assert ledger is not None and ledger.status == "succeeded", run_id
        assert [w.job_id for w in ledger.waves] == [w.job_id for w in summary.waves]
        for wave in ledger.waves:
            assert owners[wave.job_id] == wave.worker_id  # the job is on the host the ledger names
    assert not any((home / "runs").exists() for home in homes)  # nothing split across hosts


async def npaflow_status(env: WorkflowEnvironment, run_id: str) -> str:
    environ = {**os.environ, "TEMPORAL_ADDRESS": env.client.service_client.config.target_host}
    process = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "npaflow"),
        "status",
        run_id,
        env=environ,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await process.communicate()
    return out.decode()


async def test_a_run_whose_job_worker_died_names_that_worker_and_completes_when_it_returns(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    homes = [tmp_path / "host-a", tmp_path / "host-b"]
    shared = tmp_path / "shared-ledgers"
    task_queue = f"tq-owner-{uuid.uuid4().hex[:6]}"
    workers = start_workers(env, homes, task_queue, shared.as_uri())
    try:
        handle = await env.client.start_workflow(
            NpaWorkflowRun.run,
            RunRequest(
                spec=(SPECS / "runtime/local-steps.yaml").read_text(),
                poll_seconds=0.3,
                vars={"root": str(tmp_path / "data"), "sleep": "8"},
            ),
            id="rt-owner",
            task_queue=task_queue,
        )

        def slow_job_home() -> Path | None:
            for home in homes:
                for job in jobs_in(home):
                    if (
                        job.job_name.endswith("-slow")
                        and (home / "local" / "jobs" / job.job_id / SUPERVISOR_FILE).exists()
                    ):
                        return home
            return None

        owner_home = await eventually(slow_job_home, timeout=60, what="the slow job started")
        owner = homes.index(owner_home)
        owner_id = worker_id(owner_home)
        workers[owner].send_signal(signal.SIGKILL)
        workers[owner].wait()
        status = await eventually(
            lambda: _names_owner(env, owner_id), timeout=30, what="status names the owning worker"
        )
        assert "slow" in status
        workers[owner] = start_worker_process(
            env, owner_home, task_queue, NPAFLOW_LEDGER_ROOT=shared.as_uri()
        )
        summary = await asyncio.wait_for(handle.result(), timeout=120)
    finally:
        stop(workers)
    assert summary.status == "succeeded"
    slow = summary.waves[1]
    assert slow.attempt == 1 and slow.worker_id == owner_id
    names = [job.job_name for home in homes for job in jobs_in(home)]
    assert len(names) == len(set(names)) == 3


async def _names_owner(env: WorkflowEnvironment, owner_id: str) -> str:
    text = await npaflow_status(env, "rt-owner")
    return text if f"on worker {owner_id}" in text and "running" in text.lower() else ""
