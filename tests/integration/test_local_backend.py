"""The local backend runs rendered task documents as real processes with SkyPilot's statuses."""

from __future__ import annotations

import asyncio
import hashlib
import os
import signal
import threading
from pathlib import Path

import pytest

from activities.backends.base import LaunchRequest
from activities.backends.local import LocalBackend, liveness
from activities.backends.local import row_reader as local_rows
from activities.backends.local.jobs import (
    CANCEL_MARKER,
    JOB_FILE,
    SUPERVISOR_FILE,
    LocalJobRecord,
    SupervisorIdentity,
    job_marker,
    job_processes,
    read_model,
    write_model,
)
from activities.backends.local.task_status import TaskStatus, move_task
from npaflow.errors import ControllerError
from npaflow.render import dump_wave_yaml
from npaflow.runtime.status import JobStatus, aggregate_job_status
from tests.helpers import eventually

pytestmark = pytest.mark.integration


def wave(execution: str, *tasks: dict) -> str:
    return dump_wave_yaml({"name": "job", "execution": execution}, list(tasks))


def task(name: str, run: str, **extra: object) -> dict:
    return {"name": name, "envs": {"NPA_WORKFLOW_STATE": name}, "run": run, **extra}


async def status_of(backend: LocalBackend, job_id: str) -> JobStatus:
    return aggregate_job_status([r.status for r in (await backend.queue([job_id]))[job_id]])


async def finish(backend: LocalBackend, job_id: str, timeout: float = 20) -> JobStatus:
    async def terminal() -> JobStatus | None:
        status = await status_of(backend, job_id)
        return status if status.is_terminal() else None

    return await eventually(terminal, timeout=timeout, what=f"job {job_id} terminal")


async def launch(backend: LocalBackend, yaml_text: str, name: str = "job-1", **secrets: str) -> str:
    submission = await backend.submit(
        LaunchRequest(
            job_name=name,
            launch_token="tok",
            yaml=yaml_text,
            secret_names=list(secrets),
            secret_values=secrets,
        )
    )
    return submission.job_id


async def running(backend: LocalBackend, job_id: str) -> None:
    await eventually(lambda: status_of(backend, job_id), what="job status")
    await eventually(lambda: _is(backend, job_id, JobStatus.RUNNING), what=f"job {job_id} running")


async def _is(backend: LocalBackend, job_id: str, wanted: JobStatus) -> bool:
    return await status_of(backend, job_id) is wanted


async def test_a_gang_task_runs_every_rank_with_skypilot_variables(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path, "w1")
    out = tmp_path / "ranks"
    job = await launch(
        backend,
        wave(
            "serial",
            task(
                "train",
                f"mkdir -p {out} && echo $SKYPILOT_NUM_NODES > {out}/$SKYPILOT_NODE_RANK",
                num_nodes=2,
                setup=f"echo setup >> {tmp_path}/setup.log",
            ),
        ),
    )
    assert await finish(backend, job) is JobStatus.SUCCEEDED
    assert sorted(p.name for p in out.iterdir()) == ["0", "1"]
    assert (out / "1").read_text().strip() == "2"
    assert (tmp_path / "setup.log").read_text().count("setup") == 2


def meets(me: str, other: str, where: Path) -> str:
    """A task that says it started, then succeeds only once `other` has started too (60 s at most)."""
    wait = f"for i in $(seq 600); do [ -e {where}/{other} ] && exit 0; sleep 0.1; done"
    return f"touch {where}/{me}; {wait}; exit 1"


async def test_job_group_members_run_concurrently(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path, "w1")
    job = await launch(
        backend, wave("parallel", task("a", meets("a", "b", tmp_path)), task("b", meets("b", "a", tmp_path)))
    )
    assert await finish(backend, job, timeout=90) is JobStatus.SUCCEEDED  # run one after the other, a fails


async def test_tasks_whose_names_no_file_system_takes_run_with_their_logs_kept_apart(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path, "w1")
    first, second = "s" * 300 + "-a", "s" * 300 + "-b"  # a state's name may be this long; a file's may not
    job = await launch(backend, wave("serial", task(first, "echo one"), task(second, "echo two")))
    assert await finish(backend, job) is JobStatus.SUCCEEDED
    assert "one" in await backend.logs(job, first) and "two" not in await backend.logs(job, first)
    assert "two" in await backend.logs(job, second)


async def test_pipeline_failure_cancels_the_remaining_tasks(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path, "w1")
    job = await launch(backend, wave("serial", task("a", "exit 4"), task("b", "true")))
    assert await finish(backend, job) is JobStatus.FAILED
    rows = (await backend.queue([job]))[job]
    assert [r.status for r in rows] == [JobStatus.FAILED, JobStatus.CANCELLED]


async def test_a_move_in_the_same_clock_tick_as_the_last_read_is_still_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """File-system mtimes advance in ticks: a move that leaves the status stamp unchanged is not missed."""
    monkeypatch.setattr(local_rows, "RACY_STAMP_NS", 3_600 * 10**9)  # every stamp counts as this tick's
    backend = LocalBackend(tmp_path, "w1")
    job = await launch(backend, wave("serial", task("a", "sleep 30")))
    await running(backend, job)
    status_dir = tmp_path / "local" / "jobs" / job / "status"
    stamp = status_dir.stat().st_mtime_ns
    await backend.queue([job])
    move_task(status_dir.parent, "a", TaskStatus.CANCELLED, "probe")
    os.utime(status_dir, ns=(stamp, stamp))  # the move landed in the same tick
    assert await status_of(backend, job) is JobStatus.CANCELLED
    await backend.cancel(job)


async def test_a_move_is_seen_by_the_next_queue_call_without_waiting_for_a_liveness_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Moves rewrite task files in place: the status directory's mtime must still say one happened."""
    monkeypatch.setattr(local_rows, "RACY_STAMP_NS", 0)  # every stamp is trusted
    monkeypatch.setattr(local_rows, "LIVENESS_SECONDS", 3_600.0)  # no periodic re-read
    backend = LocalBackend(tmp_path, "w1")
    job = await launch(backend, wave("serial", task("a", "sleep 30")))
    await running(backend, job)
    await asyncio.sleep(0.05)  # the move below lands in a later clock tick than the read
    move_task(tmp_path / "local" / "jobs" / job, "a", TaskStatus.CANCELLED, "probe")
    assert await status_of(backend, job) is JobStatus.CANCELLED
    await backend.cancel(job)


async def test_setup_failure_is_failed_setup(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path, "w1")
    job = await launch(backend, wave("serial", task("a", "true", setup="exit 1")))
    assert await finish(backend, job) is JobStatus.FAILED_SETUP


async def test_cancel_kills_the_whole_process_group_before_returning(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path, "w1")
    job = await launch(backend, wave("serial", task("a", "sleep 30 & sleep 30; wait")))
    await running(backend, job)
    await backend.cancel(job)
    assert job_processes(job_marker(backend.jobs_dir, job)) == []
    assert await status_of(backend, job) is JobStatus.CANCELLED


async def test_cancel_finds_the_processes_of_a_record_that_lacks_a_pid(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path, "w1")
    job = await launch(backend, wave("serial", task("a", "sleep 30")))
    await running(backend, job)
    # RUNNING is recorded as the supervisor starts the task: under load its process shows a moment later.
    marker = job_marker(backend.jobs_dir, job)
    await eventually(lambda: bool(job_processes(marker)), what="the task's process")
    job_dir = tmp_path / "local" / "jobs" / job
    record = read_model(job_dir / JOB_FILE, LocalJobRecord)
    write_model(job_dir / JOB_FILE, record.model_copy(update={"supervisor_pid": 0}))
    (job_dir / SUPERVISOR_FILE).unlink()
    assert job_processes(job_marker(backend.jobs_dir, job))
    await backend.cancel(job)
    assert job_processes(job_marker(backend.jobs_dir, job)) == []


async def test_a_task_started_after_a_cancel_request_is_killed_by_its_supervisor(tmp_path: Path) -> None:
    # The setup writes the marker as a cancel would between its look for processes and the run's start.
    backend = LocalBackend(tmp_path, "w1")
    job = await launch(backend, wave("serial", task("a", "sleep 30", setup=f"touch {CANCEL_MARKER}")))
    marker = job_marker(backend.jobs_dir, job)
    await eventually(lambda: (backend.jobs_dir / job / CANCEL_MARKER).exists(), what="the cancel request")
    await eventually(lambda: not job_processes(marker), timeout=10, what="the job's processes gone")
    assert await finish(backend, job) is JobStatus.CANCELLED


async def test_a_pipeline_task_after_a_cancel_request_never_starts(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path, "w1")
    second = tmp_path / "second"
    first = task("a", f"touch {CANCEL_MARKER}")
    job = await launch(backend, wave("serial", first, task("b", f"touch {second}")))
    assert await finish(backend, job) is JobStatus.CANCELLED
    assert not second.exists()


async def test_cancelling_a_job_leaves_another_homes_job_of_the_same_id_running(tmp_path: Path) -> None:
    ours, theirs = LocalBackend(tmp_path / "ours", "w1"), LocalBackend(tmp_path / "theirs", "w1")
    mine = await launch(ours, wave("serial", task("a", "sleep 30")))
    other = await launch(theirs, wave("serial", task("a", "sleep 30")))
    assert mine == other  # one worker id in two homes: the ids repeat
    await running(ours, mine)
    await running(theirs, other)
    theirs_marker = job_marker(theirs.jobs_dir, other)
    # RUNNING is recorded just before the task's process starts: wait for the process itself
    alive = await eventually(lambda: job_processes(theirs_marker), what="their job's processes")
    await ours.cancel(mine)
    assert await status_of(ours, mine) is JobStatus.CANCELLED
    assert await status_of(theirs, other) is JobStatus.RUNNING
    assert set(alive) <= set(job_processes(theirs_marker))
    await theirs.cancel(other)


async def test_a_supervisor_that_never_started_is_a_ghost_found_within_one_poll(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path, "w1", supervisor_command=["true"])
    job = await launch(backend, wave("serial", task("a", "true")))
    await eventually(lambda: _is(backend, job, JobStatus.FAILED_CONTROLLER), timeout=2, what="ghost detected")
    rows = (await backend.queue([job]))[job]
    assert "never started" in rows[0].failure_reason
    (match,) = await backend.find_jobs("job-1")
    assert not match.can_progress


async def test_a_dead_supervisor_has_its_processes_killed_and_fails_as_controller(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path, "w1")
    job = await launch(backend, wave("serial", task("a", "sleep 30")))
    await running(backend, job)
    identity = read_model(tmp_path / "local" / "jobs" / job / SUPERVISOR_FILE, SupervisorIdentity)
    os.kill(identity.pid, signal.SIGKILL)
    await eventually(lambda: _is(backend, job, JobStatus.FAILED_CONTROLLER), what="controller lost")
    assert job_processes(job_marker(backend.jobs_dir, job)) == []


async def test_a_dead_supervisors_job_is_reported_ended_only_once_its_processes_are_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = LocalBackend(tmp_path, "w1")
    job = await launch(backend, wave("serial", task("a", "sleep 30")))
    await running(backend, job)
    identity = read_model(tmp_path / "local" / "jobs" / job / SUPERVISOR_FILE, SupervisorIdentity)
    lingering = [identity.pid + 1_000_000]  # SIGKILL sent, the process not yet exited
    monkeypatch.setattr(liveness, "job_processes", lambda marker, pgid=0: lingering)
    os.kill(identity.pid, signal.SIGKILL)
    killed = tmp_path / "local" / "jobs" / job / liveness.KILLED_MARKER

    async def polled_and_killed() -> bool:
        await backend.queue([job])  # liveness is checked when the job is polled
        return killed.exists()

    await eventually(polled_and_killed, what="the first SIGKILL")
    await asyncio.sleep(1.5)  # liveness checks come every second
    assert await status_of(backend, job) is JobStatus.RUNNING
    monkeypatch.setattr(liveness, "KILL_SETTLE_LIMIT_SECONDS", 0.0)
    await eventually(lambda: _is(backend, job, JobStatus.FAILED_CONTROLLER), what="ended after the limit")
    (row,) = (await backend.queue([job]))[job]
    assert "outlived SIGKILL" in row.failure_reason


async def test_a_new_backend_instance_reattaches_to_running_jobs(tmp_path: Path) -> None:
    job = await launch(LocalBackend(tmp_path, "w1"), wave("serial", task("a", "sleep 1")))
    restarted = LocalBackend(tmp_path, "w1")
    assert [m.job_id for m in await restarted.find_jobs("job-1")] == [job]
    assert await finish(restarted, job) is JobStatus.SUCCEEDED


async def test_job_ids_carry_the_worker_id_and_other_workers_jobs_are_refused(tmp_path: Path) -> None:
    job = await launch(LocalBackend(tmp_path / "a", "host-a"), wave("serial", task("a", "true")))
    assert job == "host-a-1"
    with pytest.raises(ControllerError, match="belongs to another worker"):
        await LocalBackend(tmp_path / "b", "host-b").queue([job])


async def test_secret_values_reach_the_job_but_not_the_disk(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path, "w1")
    digest = hashlib.sha256(b"s3cr3t").hexdigest()
    check = f'test "$(printf %s "$TOKEN" | sha256sum | cut -d" " -f1)" = {digest} && touch {tmp_path}/ok'
    job = await launch(backend, wave("serial", task("a", check)), TOKEN="s3cr3t")
    assert await finish(backend, job) is JobStatus.SUCCEEDED
    assert (tmp_path / "ok").exists()
    for path in (tmp_path / "local").rglob("*"):
        if path.is_file():
            assert "s3cr3t" not in path.read_text(errors="replace")


async def test_jobs_see_only_their_envs_a_base_and_what_is_passed_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NPAFLOW_TEST_WORKER_ONLY", "worker-secret")
    monkeypatch.setenv("NPAFLOW_TEST_PASSED", "passed-value")
    backend = LocalBackend(tmp_path, "w1", job_env=["NPAFLOW_TEST_PASSED"])
    job = await launch(backend, wave("serial", task("a", f"env > {tmp_path}/env.txt")))
    assert await finish(backend, job) is JobStatus.SUCCEEDED
    seen = (tmp_path / "env.txt").read_text()
    assert "worker-secret" not in seen and "NPAFLOW_TEST_WORKER_ONLY" not in seen
    assert "NPAFLOW_TEST_PASSED=passed-value" in seen
    assert "NPA_WORKFLOW_STATE=a" in seen and "PATH=" in seen


async def test_unknown_job_ids_have_no_rows(tmp_path: Path) -> None:
    assert await LocalBackend(tmp_path, "w1").queue(["w1-99"]) == {"w1-99": []}


async def test_logs_are_kept_per_task_and_rank(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path, "w1")
    job = await launch(backend, wave("serial", task("a", "echo hello-from-a")))
    await finish(backend, job)
    assert "hello-from-a" in await backend.logs(job, "a")


async def test_a_submission_starts_its_supervisor_off_the_event_loop_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The spawner's answer and the job's files are blocking I/O: on the loop they stalled the worker."""
    backend = LocalBackend(tmp_path, "w1")
    starts: list[threading.Thread] = []
    real_start = backend.supervisors.start

    def start(job_dir: Path, env: dict[str, str]) -> int:
        starts.append(threading.current_thread())
        return real_start(job_dir, env)

    monkeypatch.setattr(backend.supervisors, "start", start)
    job = await launch(backend, wave("serial", task("a", "true")))
    assert starts and starts[0] is not threading.main_thread()
    assert await finish(backend, job) is JobStatus.SUCCEEDED
