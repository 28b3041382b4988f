"""No job outlives its run: runs that end without their own cleanup have their jobs reconciled.

Terminate (the UI's button), an execution timeout and a worker that died before
the terminate all skip the run's workflow code; the workers' sweep finds the
live job, the run's reconcile workflow cancels it by exact id and writes it
into the ledger. Each test checks the job's own mark: it never ran to its end.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowFailureError, WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from activities.backends.local.jobs import job_marker, job_processes
from npaflow.picture.report import ReportLinks
from npaflow.runtime.metrics import Metric
from npaflow.runtime.metrics import install as install_metrics
from npaflow.runtime.request import RunRequest
from npaflow.runtime.usage import RunUsage
from tests.harness import ROOT, SPECS, TEMPORAL_BIN, Harness, start_worker_process
from tests.helpers import RecordingSink, eventually
from workflows_def import NpaWorkflowRun

pytestmark = pytest.mark.integration

SPEC = "runtime/marker-steps.yaml"
#: The issue's bound: a job whose run ended behind npaflow's back is cancelled within this.
BOUND_SECONDS = 60.0


def ledger_of(home: Path, run_id: str) -> dict:
    path = home / "runs" / run_id / "npa-workflow" / "runtime.json"
    return json.loads(path.read_text()) if path.exists() else {}


async def reconciled_ledger(home: Path, run_id: str, status: str) -> dict:
    """The run's ledger once it says `status` and lists a reconciled job."""

    def ready() -> dict | None:
        ledger = ledger_of(home, run_id)
        return ledger if ledger.get("status") == status and ledger.get("reconciled") else None

    return await eventually(ready, timeout=BOUND_SECONDS, interval=0.2, what=f"ledger {status} + reconciled")


async def slow_job_started(root: Path, run_id: str) -> None:
    await eventually(lambda: (root / run_id / "slow.started").exists(), timeout=60, what="slow job started")


def assert_cancelled_in_ledger(ledger: dict, job_id: str) -> None:
    (job,) = ledger["reconciled"]
    assert job["job_id"] == job_id and job["cancellation"]["state"] == "verified"
    (slow,) = [w for w in ledger["waves"] if w["job_id"] == job_id]
    assert slow["status"] == "cancelled" and slow["cancellation"]["state"] == "verified"


async def complete_the_await(env: WorkflowEnvironment, handle: WorkflowHandle, result: str) -> None:
    """`temporal activity complete` of the run's running await, with a result of the operator's."""

    async def await_activity_id() -> str | None:
        pending = (await handle.describe()).raw_description.pending_activities
        return next((a.activity_id for a in pending if a.activity_type.name == "await_wave"), None)

    activity_id = await eventually(await_activity_id, timeout=30, what="await_wave pending")
    address = env.client.service_client.config.target_host
    completing = await asyncio.create_subprocess_exec(
        *(str(TEMPORAL_BIN), "activity", "complete", "--activity-id", activity_id),
        *("--workflow-id", handle.id, "--result", result, "--address", address),
    )
    assert await completing.wait() == 0


async def cancelled_while_its_job_runs(fake_sky: Any, handle: WorkflowHandle) -> None:
    """Cancel the run once its first job runs, and wait for the run to end (it fails: cancelled)."""
    from tests.integration.fake_skypilot import statuses

    await eventually(
        lambda: fake_sky.jobs and fake_sky.jobs[1].statuses == statuses("RUNNING"), what="job running"
    )
    await handle.signal("cancel", "operator said stop")
    with pytest.raises(WorkflowFailureError):
        await handle.result()


async def npaflow_status(env: WorkflowEnvironment, run_id: str, *extra: str, command: str = "status") -> str:
    """`npaflow status RUN_ID` (or `list --json EXTRA...`) as a user runs it (the worker stays free)."""
    address = env.client.service_client.config.target_host
    words = (command, run_id) if command == "status" else (command, "--json", *extra)
    process = await asyncio.create_subprocess_exec(
        *(str(TEMPORAL_BIN.parent / "npaflow"), *words, "--address", address),
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()
    return out.decode()


async def test_terminate_mid_wave_cancels_the_job_records_it_and_resume_runs_the_rest_once(
    local_harness: Harness, env: WorkflowEnvironment, tmp_path: Path
) -> None:
    local_harness.reconcile_seconds = 0.5
    run_id = f"rt-term-{uuid.uuid4().hex[:6]}"
    options = {"vars": {"root": str(tmp_path)}, "poll_seconds": 0.2}
    async with local_harness.worker():
        handle = await local_harness.start(SPEC, run_id=run_id, **options)
        await slow_job_started(tmp_path, run_id)
        terminated_at = time.monotonic()
        await handle.terminate(reason="operator pressed Terminate")
        ledger = await reconciled_ledger(local_harness.home, run_id, "terminated")
        assert time.monotonic() - terminated_at < BOUND_SECONDS
        assert_cancelled_in_ledger(ledger, "w1-1")
        assert not job_processes(job_marker(local_harness.home / "local" / "jobs", "w1-1"))
        assert not (tmp_path / run_id / "marker").exists()
        text = await npaflow_status(env, run_id)
        assert f"run {run_id}: terminated\n" in text
        assert "reconciled: job w1-1" in text and "verified" in text
        hours = ledger["usage"]["node_hours"]  # the clock stopped at the cancel (0 within its second)
        assert f"(node_hours {hours:.4f};" in text if hours else "node_hours" not in text
        resumed = await local_harness.start(SPEC, run_id=run_id, **options)
        summary = await resumed.result()
    assert summary.status == "succeeded"
    terminated = json.loads(await npaflow_status(env, run_id, "--phase", "terminated", command="list"))
    assert run_id not in [row["run_id"] for row in terminated]  # its newest execution succeeded
    assert (tmp_path / run_id / "marker").read_text().split() == ["slow", "after"]
    assert len((tmp_path / run_id / "slow.started").read_text().split()) == 2  # killed, then resumed


async def test_an_execution_timeout_mid_wave_cancels_the_job_and_the_ledger_says_timed_out(
    local_harness: Harness, tmp_path: Path
) -> None:
    local_harness.reconcile_seconds = 0.5
    run_id = f"rt-timeout-{uuid.uuid4().hex[:6]}"
    async with local_harness.worker():
        handle = await local_harness.client.start_workflow(
            NpaWorkflowRun.run,
            local_harness.request(SPEC, vars={"root": str(tmp_path)}, poll_seconds=0.2),
            id=run_id,
            task_queue=local_harness.task_queue,
            execution_timeout=timedelta(seconds=10),
        )
        await slow_job_started(tmp_path, run_id)
        with pytest.raises(WorkflowFailureError):
            await handle.result()
        ledger = await reconciled_ledger(local_harness.home, run_id, "timed_out")
    assert_cancelled_in_ledger(ledger, "w1-1")
    assert ledger["reconciled"][0]["run_ending"] == "timed_out"
    assert not (tmp_path / run_id / "marker").exists()


async def test_a_bogus_await_result_fails_only_that_activity_and_the_run_cancels_its_job(
    local_harness: Harness, env: WorkflowEnvironment, tmp_path: Path
) -> None:
    run_id = f"rt-bogus-{uuid.uuid4().hex[:6]}"
    async with local_harness.worker():
        handle = await local_harness.start(
            SPEC,
            run_id=run_id,
            vars={"root": str(tmp_path)},
            poll_seconds=0.2,
            max_infrastructure_recoveries=0,
        )
        await slow_job_started(tmp_path, run_id)
        await complete_the_await(env, handle, '"bogus"')
        with pytest.raises(WorkflowFailureError):
            await handle.result()
    ledger = ledger_of(local_harness.home, run_id)
    assert ledger["status"] == "failed"
    (slow,) = [w for w in ledger["waves"] if w["job_id"] == "w1-1"]
    assert slow["status"] == "failed" and slow["cancellation"]["state"] == "verified"
    assert "malformed" in slow["error"]
    assert not job_processes(job_marker(local_harness.home / "local" / "jobs", "w1-1"))
    assert not (tmp_path / run_id / "marker").exists()


async def test_a_worker_killed_before_a_terminate_cancels_the_job_when_it_restarts(
    env: WorkflowEnvironment, home: Path, tmp_path: Path
) -> None:
    task_queue = f"tq-orphan-{uuid.uuid4().hex[:6]}"
    run_id = f"rt-killterm-{uuid.uuid4().hex[:6]}"
    settings = {"NPAFLOW_RECONCILE_SECONDS": "1"}
    worker = start_worker_process(env, home, task_queue, **settings)
    request = RunRequest(
        spec=(SPECS / SPEC).read_text(), poll_seconds=0.2, vars={"root": str(tmp_path), "sleep": "40"}
    )
    handle = await env.client.start_workflow(NpaWorkflowRun.run, request, id=run_id, task_queue=task_queue)
    await slow_job_started(tmp_path, run_id)
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    await handle.terminate(reason="terminated while no worker ran")
    restarted = time.monotonic()
    replacement = start_worker_process(env, home, task_queue, **settings)
    try:
        ledger = await reconciled_ledger(home, run_id, "terminated")
        assert time.monotonic() - restarted < BOUND_SECONDS
    finally:
        replacement.terminate()
        replacement.wait()
    (job,) = ledger["reconciled"]
    assert job["cancellation"]["state"] == "verified"
    assert not job_processes(job_marker(home / "local" / "jobs", job["job_id"]))
    assert not (tmp_path / run_id / "marker").exists()


async def test_two_sweeps_racing_over_one_orphan_cancel_it_once(harness: Harness, fake) -> None:
    from worker.reconciler import OrphanSweep

    fake.default = ["RUNNING"]
    run_id = f"rt-race-{uuid.uuid4().hex[:6]}"
    harness.reconcile_seconds = 0  # only the sweeps below run
    async with harness.worker():
        handle = await harness.start(SPEC, run_id=run_id)
        await eventually(lambda: fake.launches, what="the job launched")
        await handle.terminate()
        context = harness.context()
        sweeps = [OrphanSweep(harness.client, context) for _ in range(3)]
        await asyncio.gather(*(sweep.sweep() for sweep in sweeps))
        await asyncio.gather(*(sweep.sweep() for sweep in sweeps))
        await eventually(lambda: ledger_of(harness.home, run_id).get("reconciled"), what="reconciled")
        for sweep in sweeps:  # the job is terminal now: a later sweep finds nothing
            assert await sweep.sweep() == 0
    assert fake.cancel_calls == ["1"]


@pytest.mark.parametrize("ending", ["terminated", "timed_out"])
async def test_a_run_ended_behind_npaflow_on_skypilot_has_its_managed_job_cancelled_by_id(
    fake_sky_harness: Harness,
    fake_sky,
    tmp_path: Path,
    ending: str,
) -> None:
    from tests.integration.fake_skypilot import statuses

    fake_sky.default = [statuses("PENDING"), statuses("RUNNING")]
    fake_sky_harness.reconcile_seconds = 0.5
    run_id = f"rt-sky-{ending.replace('_', '')}-{uuid.uuid4().hex[:6]}"
    async with fake_sky_harness.worker():
        handle = await fake_sky_harness.client.start_workflow(
            NpaWorkflowRun.run,
            fake_sky_harness.request(SPEC, vars={"root": str(tmp_path)}, backend="skypilot"),
            id=run_id,
            task_queue=fake_sky_harness.task_queue,
            execution_timeout=timedelta(seconds=8) if ending == "timed_out" else None,
        )
        await eventually(
            lambda: fake_sky.jobs and fake_sky.jobs[1].statuses == statuses("RUNNING"), what="job running"
        )
        if ending == "terminated":
            await handle.terminate()
        ledger = await reconciled_ledger(fake_sky_harness.home, run_id, ending)
    assert fake_sky.cancel_calls == [[1]]
    assert_cancelled_in_ledger(ledger, "1")
    assert fake_sky.jobs[1].statuses == statuses("CANCELLED")
    assert fake_sky.live_calls > 0  # found by the sweep's one unfinished-jobs call, not by name


async def test_a_skypilot_job_whose_run_was_terminated_while_no_worker_ran_is_cancelled_at_worker_start(
    fake_sky_harness: Harness,
    fake_sky,
    tmp_path: Path,
) -> None:
    from tests.integration.fake_skypilot import statuses

    fake_sky.default = [statuses("PENDING"), statuses("RUNNING")]
    fake_sky_harness.reconcile_seconds = 30.0  # only the sweep at start can find it in time
    run_id = f"rt-sky-down-{uuid.uuid4().hex[:6]}"
    async with fake_sky_harness.worker():
        handle = await fake_sky_harness.start(
            SPEC, run_id=run_id, vars={"root": str(tmp_path)}, backend="skypilot"
        )
        await eventually(
            lambda: fake_sky.jobs and fake_sky.jobs[1].statuses == statuses("RUNNING"), what="job running"
        )
    await handle.terminate(reason="terminated while no worker ran")
    assert fake_sky.cancel_calls == []
    async with fake_sky_harness.worker():
        ledger = await reconciled_ledger(fake_sky_harness.home, run_id, "terminated")
    assert fake_sky.cancel_calls == [[1]]
    assert_cancelled_in_ledger(ledger, "1")


async def test_a_bogus_await_result_on_skypilot_cancels_the_managed_job_and_fails_the_run(
    fake_sky_harness: Harness,
    fake_sky,
    env: WorkflowEnvironment,
    tmp_path: Path,
) -> None:
    from tests.integration.fake_skypilot import statuses

    fake_sky.default = [statuses("PENDING"), statuses("RUNNING")]
    run_id = f"rt-sky-bogus-{uuid.uuid4().hex[:6]}"
    async with fake_sky_harness.worker():
        handle = await fake_sky_harness.start(
            SPEC,
            run_id=run_id,
            vars={"root": str(tmp_path)},
            backend="skypilot",
            max_infrastructure_recoveries=0,
        )
        await complete_the_await(env, handle, '{"status": 7}')
        with pytest.raises(WorkflowFailureError):
            await handle.result()
    ledger = ledger_of(fake_sky_harness.home, run_id)
    assert ledger["status"] == "failed"
    assert fake_sky.cancel_calls == [[1]]
    (wave,) = ledger["waves"]
    assert wave["cancellation"]["state"] == "verified" and "malformed" in wave["error"]


async def closed_ledger(home: Path, run_id: str, status: str) -> dict:
    """The run's ledger once it says `status` and holds no attempt in flight."""

    def ready() -> dict | None:
        ledger = ledger_of(home, run_id)
        in_flight = [w for w in ledger.get("waves", []) if w["status"] in ("running", "pending")]
        return ledger if ledger.get("status") == status and not in_flight else None

    return await eventually(ready, timeout=BOUND_SECONDS, interval=0.2, what=f"ledger {status}, closed")


async def job_ended_by_itself(root: Path, run_id: str) -> None:
    await eventually(lambda: (root / run_id / "slow.txt").exists(), timeout=60, what="slow job ended")


def assert_closed_from_the_job_record(ledger: dict, job_id: str, ending: str) -> None:
    """The attempt says what its job said of itself (it ran to its end), and nothing was cancelled."""
    (slow,) = [w for w in ledger["waves"] if w["job_id"] == job_id]
    assert slow["status"] == "succeeded" and slow["sky_status"] == "SUCCEEDED"
    assert slow["ended_at"] and slow["tasks"] and slow["tasks"][0]["end_at"]
    assert any("ended SUCCEEDED on its own" in note for note in slow["reconciliation"])
    assert ledger["reconciled"] == []
    assert ending in ledger["error"] and "closed its ledger from its jobs' own records" in ledger["error"]


@pytest.fixture
def sink() -> Iterator[RecordingSink]:
    """The metrics this process records (the in-process worker's) while a test runs."""
    recorded = RecordingSink()
    install_metrics(recorded)
    yield recorded
    install_metrics(None)


async def test_a_terminated_run_whose_job_ended_on_its_own_has_its_ledger_closed_and_shown_as_it_says(
    local_harness: Harness, env: WorkflowEnvironment, tmp_path: Path, sink: RecordingSink
) -> None:
    from npaflow.cli.ui.pages import ended, live_sections
    from npaflow.cli.ui.reads import RunReads
    from worker.reconciler import sweeping

    local_harness.reconcile_seconds = 0  # no sweep until the job has ended by itself
    run_id = f"rt-term-ended-{uuid.uuid4().hex[:6]}"
    async with local_harness.worker():
        handle = await local_harness.start(
            SPEC, run_id=run_id, vars={"root": str(tmp_path), "sleep": "2"}, poll_seconds=0.2
        )
        await slow_job_started(tmp_path, run_id)
        await handle.terminate(reason="operator pressed Terminate")
        await job_ended_by_itself(tmp_path, run_id)
        assert ledger_of(local_harness.home, run_id)["status"] == "running"  # the bug's starting point
        swept_at = time.monotonic()
        async with sweeping(local_harness.client, local_harness.context(), 1.0):
            ledger = await closed_ledger(local_harness.home, run_id, "terminated")
        assert time.monotonic() - swept_at < BOUND_SECONDS
        text = await npaflow_status(env, run_id)
        listed = json.loads(await npaflow_status(env, run_id, "--phase", "terminated", command="list"))
        shot = await RunReads(local_harness.client).snapshot(run_id)
    assert_closed_from_the_job_record(ledger, "w1-1", "terminated")
    assert f"run {run_id}: terminated\n" in text
    # Its own answer still counts the job as running; status and the page show the ledger's word.
    assert "  slow attempt 1: succeeded, job w1-1" in text
    assert f"(node_hours {ledger['usage']['node_hours']:.4f};" in text
    assert "its ledger was closed from the jobs' own records" in text
    sections = live_sections(shot, ReportLinks())
    assert (
        '<b id="run-status">terminated</b>' in sections["meta"]
        and "terminated outside npaflow" in sections["meta"]
    )
    assert shot.view is not None and [w.status.value for w in shot.view.waves] == ["succeeded"]
    assert shot.view.usage == RunUsage.model_validate(ledger["usage"]) and ended(shot)
    (row,) = [row for row in listed if row["run_id"] == run_id]
    assert row["phase"] == "terminated" and row["execution_status"] == "TERMINATED"
    assert row["gpu_hours"] == ledger["usage"]["gpu_hours"]  # the ledger's total, not unknown
    install_metrics(None)
    assert (
        round(sink.total(Metric.NODE_HOURS), 4) == round(ledger["usage"]["node_hours"], 4) > 0
    )  # counted once
    assert (tmp_path / run_id / "marker").read_text().split() == ["slow"]


async def test_a_timed_out_run_whose_job_ended_while_no_worker_ran_is_closed_at_worker_start(
    local_harness: Harness, tmp_path: Path
) -> None:
    local_harness.reconcile_seconds = 0
    run_id = f"rt-timeout-ended-{uuid.uuid4().hex[:6]}"
    async with local_harness.worker():
        handle = await local_harness.client.start_workflow(
            NpaWorkflowRun.run,
            local_harness.request(SPEC, vars={"root": str(tmp_path), "sleep": "4"}, poll_seconds=0.2),
            id=run_id,
            task_queue=local_harness.task_queue,
            execution_timeout=timedelta(seconds=3),
        )
        await slow_job_started(tmp_path, run_id)
    with pytest.raises(WorkflowFailureError):
        await handle.result()
    await job_ended_by_itself(tmp_path, run_id)
    local_harness.reconcile_seconds = 30.0  # only the sweep at start can close it in time
    restarted = time.monotonic()
    async with local_harness.worker():
        ledger = await closed_ledger(local_harness.home, run_id, "timed_out")
    assert time.monotonic() - restarted < BOUND_SECONDS
    assert_closed_from_the_job_record(ledger, "w1-1", "execution timeout")


async def test_a_ledger_sweep_leaves_alone_a_run_whose_job_still_runs_and_a_run_that_is_open(
    local_harness: Harness, tmp_path: Path
) -> None:
    from worker.ledger_sweep import LedgerSweep

    local_harness.reconcile_seconds = 0
    open_id, live_id = f"rt-open-{uuid.uuid4().hex[:6]}", f"rt-live-{uuid.uuid4().hex[:6]}"
    options = {"vars": {"root": str(tmp_path), "sleep": "20"}, "poll_seconds": 0.2}
    async with local_harness.worker():
        running = await local_harness.start(SPEC, run_id=open_id, **options)
        terminated = await local_harness.start(SPEC, run_id=live_id, **options)
        await slow_job_started(tmp_path, open_id)
        await slow_job_started(tmp_path, live_id)
        for run_id in (open_id, live_id):  # the first export follows the launch: under load, after the job
            await eventually(lambda run_id=run_id: ledger_of(local_harness.home, run_id).get("waves"))
        await terminated.terminate()
        sweep = LedgerSweep(local_harness.client, local_harness.context())
        assert await sweep.sweep() == 0  # the live job is the orphan sweep's; the open run its own
        assert ledger_of(local_harness.home, live_id)["status"] == "running"
        assert ledger_of(local_harness.home, open_id)["status"] == "running"
        await running.cancel()


async def test_a_cancel_the_backend_never_acted_on_is_said_and_the_sweep_cancels_and_clocks_the_job(
    fake_sky_harness: Harness, fake_sky, env: WorkflowEnvironment, tmp_path: Path, sink: RecordingSink
) -> None:
    from npaflow.cli.ui.reads import RunReads
    from tests.integration.fake_skypilot import statuses
    from worker.reconciler import sweeping

    fake_sky.default = [statuses("PENDING"), statuses("RUNNING")]
    fake_sky.cancels_ignored = 1  # the run's own cancel is accepted and never acted on
    fake_sky_harness.reconcile_seconds = 0  # no sweep until the run has ended
    run_id = f"rt-sky-stuck-cancel-{uuid.uuid4().hex[:6]}"
    async with fake_sky_harness.worker():
        handle = await fake_sky_harness.start(
            SPEC, run_id=run_id, vars={"root": str(tmp_path)}, backend="skypilot", poll_seconds=0.2
        )
        await cancelled_while_its_job_runs(fake_sky, handle)
        (ended,) = ledger_of(fake_sky_harness.home, run_id)["waves"]
        await asyncio.sleep(1.0)  # the job runs on, and bills
        async with sweeping(fake_sky_harness.client, fake_sky_harness.context(), 0.5):
            ledger = await reconciled_ledger(fake_sky_harness.home, run_id, "cancelled")
        text = await npaflow_status(env, run_id)
        shot = await RunReads(fake_sky_harness.client).snapshot(run_id)
    assert fake_sky.cancel_calls == [[1], [1]]  # the run's own, then the sweep's
    assert fake_sky.jobs[1].statuses == statuses("CANCELLED")
    assert ended["cancellation"]["state"] == "requested"
    assert "the cancel of job 1 was requested, not verified: it may still run" in ended["error"]
    (wave,) = ledger["waves"]
    assert wave["cancellation"]["state"] == "verified"
    assert wave["node_hours"] > ended["node_hours"] + 0.9 / 3600  # clocked up to the sweep's cancel
    assert f"run {run_id}: cancelled\n" in text
    assert "the cancel of job 1 was not verified: it may still run until the workers' orphan sweep" in text
    assert "reconciled: job 1 (001|serial|:slow:-, attempt 1) cancelled after the run ended cancelled" in text
    assert f"(node_hours {ledger['usage']['node_hours']:.4f};" in text
    assert shot.view is not None and shot.view.usage == RunUsage.model_validate(ledger["usage"])  # the page
    install_metrics(None)
    assert round(sink.total(Metric.NODE_HOURS), 4) == round(ledger["usage"]["node_hours"], 4)  # counted once


async def test_a_job_that_ends_on_its_own_after_a_cancel_never_acted_on_is_clocked_to_its_own_end(
    fake_sky_harness: Harness, fake_sky, env: WorkflowEnvironment, tmp_path: Path, sink: RecordingSink
) -> None:
    from tests.integration.fake_skypilot import statuses
    from worker.ledger_sweep import LedgerSweep

    fake_sky.default = [statuses("PENDING"), statuses("RUNNING")]
    fake_sky.cancels_ignored = 1  # the run's own cancel is accepted and never acted on
    fake_sky_harness.reconcile_seconds = 0  # no orphan sweep: the job is left to end on its own
    run_id = f"rt-sky-ends-alone-{uuid.uuid4().hex[:6]}"
    async with fake_sky_harness.worker():
        handle = await fake_sky_harness.start(  # 8 GPUs a node: every hour counts 8 GPU-hours
            "runtime/gpu-budget.yaml", run_id=run_id, vars={"root": str(tmp_path)}, backend="skypilot"
        )
        await cancelled_while_its_job_runs(fake_sky, handle)
        (ended,) = ledger_of(fake_sky_harness.home, run_id)["waves"]
        fake_sky.jobs[1].script = [statuses("RUNNING"), statuses("SUCCEEDED")]  # runs on, then ends
        sweep = LedgerSweep(fake_sky_harness.client, fake_sky_harness.context())
        assert await sweep.sweep() == 0  # still running: left for a later sweep (the orphan sweep's)
        await asyncio.sleep(1.0)  # the job runs on, and bills
        assert await sweep.sweep() == 1  # it has ended: its attempt is clocked to its end

        def clocked() -> dict | None:
            (wave,) = ledger_of(fake_sky_harness.home, run_id)["waves"]
            return wave if wave["cancellation"]["state"] == "verified" else None

        wave = await eventually(clocked, timeout=BOUND_SECONDS, what="attempt clocked to the job's end")
        ledger = ledger_of(fake_sky_harness.home, run_id)
        text = await npaflow_status(env, run_id)
        listed = json.loads(await npaflow_status(env, run_id, "--phase", "cancelled", command="list"))
        assert await sweep.sweep() == 0  # settled: once is enough
    assert fake_sky.cancel_calls == [[1]]  # nothing cancels a job that has ended
    assert (ended["cancellation"]["state"], wave["status"], wave["sky_status"]) == (
        "requested",
        "cancelled",
        "SUCCEEDED",
    )
    assert wave["node_hours"] > ended["node_hours"] + 0.9 / 3600  # every hour it ran, to its own end
    assert "the job then ended SUCCEEDED" in wave["reconciliation"][-1]
    assert f"(node_hours {ledger['usage']['node_hours']:.4f};" in text
    assert "ended SUCCEEDED after the run's cancel was not seen to take" in text
    (row,) = [row for row in listed if row["run_id"] == run_id]
    assert row["gpu_hours"] == ledger["usage"]["gpu_hours"]  # `list` counts what the ledger counts
    install_metrics(None)
    assert round(sink.total(Metric.NODE_HOURS), 4) == round(ledger["usage"]["node_hours"], 4)  # counted once


async def test_a_resume_polls_the_job_a_cancel_never_stopped_instead_of_launching_beside_it(
    fake_sky_harness: Harness, fake_sky, tmp_path: Path
) -> None:
    from tests.integration.fake_skypilot import statuses

    fake_sky.default = [statuses("PENDING"), statuses("RUNNING")]
    fake_sky.cancels_ignored = 1  # the run's own cancel is accepted and never acted on
    fake_sky_harness.reconcile_seconds = 0  # no sweep: the job runs on past its run
    run_id = f"rt-sky-adopt-{uuid.uuid4().hex[:6]}"
    options = {"vars": {"root": str(tmp_path)}, "backend": "skypilot", "poll_seconds": 0.2}
    async with fake_sky_harness.worker():
        handle = await fake_sky_harness.start(SPEC, run_id=run_id, **options)
        await cancelled_while_its_job_runs(fake_sky, handle)
        fake_sky.jobs[1].script = [statuses("RUNNING"), statuses("SUCCEEDED")]  # it runs to its end
        fake_sky.default = [statuses("SUCCEEDED")]
        (tmp_path / run_id).mkdir()
        for output in ("slow.txt", "after.txt"):  # what the jobs write
            (tmp_path / run_id / output).write_text("ok\n")
        summary = await (await fake_sky_harness.start(SPEC, run_id=run_id, **options)).result()
    assert summary.status == "succeeded"
    assert sorted(fake_sky.jobs) == [1, 2]  # job 1 polled to its end; only `after` launched
    slow = [w for w in ledger_of(fake_sky_harness.home, run_id)["waves"] if w["states"] == ["slow"]]
    assert [(w["attempt"], w["status"], w["job_id"], w["adopted"]) for w in slow] == [
        (1, "succeeded", "1", True)
    ]
    assert slow[0]["cancellation"]["state"] == "requested"  # what the cancelled execution asked, kept
