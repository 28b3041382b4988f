"""The local backend runs rendered task documents as real processes with SkyPilot's statuses."""

from __future__ import annotations

import asyncio
import hashlib
import time
from pathlib import Path

import pytest

from activities.backends.base import LaunchRequest
from activities.backends.local import LocalBackend
from npaflow.render import dump_wave_yaml
from npaflow.runtime.status import JobStatus, aggregate_job_status

pytestmark = pytest.mark.integration


def wave(execution: str, *tasks: dict) -> str:
    return dump_wave_yaml({"name": "job", "execution": execution}, list(tasks))


def task(name: str, run: str, **extra: object) -> dict:
    return {"name": name, "envs": {"NPA_WORKFLOW_STATE": name}, "run": run, **extra}


async def finish(backend: LocalBackend, job_id: str, timeout: float = 20) -> JobStatus:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = (await backend.queue([job_id]))[job_id]
        status = aggregate_job_status([JobStatus.parse(r.status) for r in rows])
        if status.is_terminal():
            return status
        await asyncio.sleep(0.05)
    raise AssertionError(f"job {job_id} still {status}")


async def launch(backend: LocalBackend, yaml_text: str, name: str = "job-1", **secrets: str) -> str:
    return await backend.launch(LaunchRequest(job_name=name, launch_token="tok", yaml=yaml_text,
                                              secret_names=list(secrets), secret_values=secrets))


async def test_a_gang_task_runs_every_rank_with_skypilot_variables(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path)
    out = tmp_path / "ranks"
    job = await launch(backend, wave("serial", task(
        "train", f"mkdir -p {out} && echo $SKYPILOT_NUM_NODES > {out}/$SKYPILOT_NODE_RANK",
        num_nodes=2, setup=f"echo setup >> {tmp_path}/setup.log")))
    assert await finish(backend, job) is JobStatus.SUCCEEDED
    assert sorted(p.name for p in out.iterdir()) == ["0", "1"]
    assert (out / "1").read_text().strip() == "2"
    assert (tmp_path / "setup.log").read_text().count("setup") == 2


async def test_job_group_members_run_concurrently(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path)
    started = time.monotonic()
    job = await launch(backend, wave("parallel", task("a", "sleep 1"), task("b", "sleep 1")))
    assert await finish(backend, job) is JobStatus.SUCCEEDED
    assert time.monotonic() - started < 1.9


async def test_pipeline_failure_cancels_the_remaining_tasks(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path)
    job = await launch(backend, wave("serial", task("a", "exit 4"), task("b", "true")))
    assert await finish(backend, job) is JobStatus.FAILED
    rows = (await backend.queue([job]))[job]
    assert [r.status for r in rows] == ["FAILED", "CANCELLED"]


async def test_setup_failure_is_failed_setup(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path)
    job = await launch(backend, wave("serial", task("a", "true", setup="exit 1")))
    assert await finish(backend, job) is JobStatus.FAILED_SETUP


async def test_cancel_kills_the_whole_process_group(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path)
    marker = tmp_path / "should-not-exist"
    job = await launch(backend, wave("serial", task("a", f"sleep 5 && touch {marker}")))
    await asyncio.sleep(0.5)
    await backend.cancel(job)
    assert await finish(backend, job) is JobStatus.CANCELLED
    await asyncio.sleep(5.5)
    assert not marker.exists()


async def test_a_new_backend_instance_reattaches_to_running_jobs(tmp_path: Path) -> None:
    job = await launch(LocalBackend(tmp_path), wave("serial", task("a", "sleep 1")))
    restarted = LocalBackend(tmp_path)
    assert await restarted.find_jobs("job-1") == [job]
    assert await finish(restarted, job) is JobStatus.SUCCEEDED


async def test_secret_values_reach_the_job_but_not_the_disk(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path)
    digest = hashlib.sha256(b"s3cr3t").hexdigest()
    check = f'test "$(printf %s "$TOKEN" | sha256sum | cut -d" " -f1)" = {digest} && touch {tmp_path}/ok'
    job = await launch(backend, wave("serial", task("a", check)), TOKEN="s3cr3t")
    assert await finish(backend, job) is JobStatus.SUCCEEDED
    assert (tmp_path / "ok").exists()
    for path in (tmp_path / "local").rglob("*"):
        if path.is_file():
            assert "s3cr3t" not in path.read_text(errors="replace")


async def test_unknown_job_ids_have_no_rows(tmp_path: Path) -> None:
    assert await LocalBackend(tmp_path).queue(["99"]) == {"99": []}


async def test_logs_are_kept_per_task_and_rank(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path)
    job = await launch(backend, wave("serial", task("a", "echo hello-from-a")))
    await finish(backend, job)
    assert "hello-from-a" in await backend.logs(job, "a")
