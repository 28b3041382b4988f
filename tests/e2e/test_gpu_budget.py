"""`--max-gpu-hours`: a job that would overspend the run's budget is cancelled by id and the run fails
with class `budget`; nothing launches while the budget is spent; a raised budget resumes it."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import PendingActivityState
from temporalio.client import WorkflowFailureError
from temporalio.testing import WorkflowEnvironment

from npaflow.runtime.metrics import Metric
from npaflow.runtime.metrics import install as install_metrics
from npaflow.runtime.request import RunRequest
from npaflow.runtime.summary import RunSummary
from npaflow.temporal.client import summary_from_failure
from tests.e2e.test_cli_runs import npaflow
from tests.harness import SPECS, Harness, replaced_worker, start_worker_process
from tests.helpers import RecordingSink, eventually
from workflows_def import NpaWorkflowRun

pytestmark = pytest.mark.e2e

STARTED = PendingActivityState.PENDING_ACTIVITY_STATE_STARTED
BUDGET = 0.02  # 72 GPU-seconds: the warm-up spends 8-16 of them on 8 GPUs, training the rest in ~7 s


async def result_of(env: WorkflowEnvironment, run_id: str) -> tuple[str, str, str]:
    handle = env.client.get_workflow_handle(run_id)
    try:
        await handle.result()
        return "succeeded", "", ""
    except WorkflowFailureError as failure:
        summary = summary_from_failure(failure)
        assert summary is not None
        return summary.status, summary.failure_class.value if summary.failure_class else "", summary.error


async def test_a_run_stops_at_its_gpu_hour_budget_cancels_its_job_and_resumes_with_a_raised_one(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        started = time.monotonic()
        outcome = await local_harness.finish(
            await local_harness.start(
                "runtime/gpu-budget.yaml",
                run_id="budget-run",
                vars={"root": str(tmp_path)},
                max_gpu_hours=BUDGET,
            )
        )
        took = time.monotonic() - started
        assert outcome.status == "failed" and outcome.summary is not None and outcome.ledger is not None
        assert outcome.summary.failure_class is not None and outcome.summary.failure_class.value == "budget"
        assert "reached the run's GPU-hour budget (0.02 GPU-h" in outcome.error
        train = outcome.ledger.waves[-1]
        assert (train.states, train.status, train.error_category) == (["train"], "failed", "budget")
        assert train.cancellation.state == "verified"  # its job was cancelled by id, and gone
        assert took < 50  # stopped at the budget, long before training's 60 s
        spent = outcome.ledger.usage.gpu_hours

        refused = await npaflow(env, local_harness, "resume", "budget-run", "--max-gpu-hours", f"{spent:.6f}")
        assert refused.returncode == 0, refused.stderr
        status, failure_class, error = await result_of(env, "budget-run")
        assert (status, failure_class) == ("failed", "budget")
        assert "GPU-hour budget of" in error and "is spent" in error and "nothing more launches" in error

        (tmp_path / "fast").touch()
        resumed = await npaflow(env, local_harness, "resume", "budget-run", "--max-gpu-hours", "1")
        assert resumed.returncode == 0, resumed.stderr
        assert (await result_of(env, "budget-run"))[0] == "succeeded"


async def test_resume_refuses_a_budget_for_a_running_run(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        handle = await local_harness.start(
            "runtime/gpu-budget.yaml", run_id="budget-live", vars={"root": str(tmp_path)}
        )
        result = await npaflow(env, local_harness, "resume", "budget-live", "--max-gpu-hours", "5")
        await handle.cancel()
    assert result.returncode == 2
    assert "--max-gpu-hours and --reread-items apply only when restarting a run that ended" in result.stderr


async def test_a_budget_holds_when_the_worker_awaiting_the_job_is_killed(
    env: WorkflowEnvironment, home: Path, tmp_path: Path
) -> None:
    """The run's own timer stops the job at its budget, not the dead await's heartbeat timeout (60 s)."""
    task_queue = f"tq-budget-kill-{uuid.uuid4().hex[:6]}"
    worker = start_worker_process(env, home, task_queue)
    request = RunRequest(
        spec=(SPECS / "runtime/gpu-budget.yaml").read_text(),
        poll_seconds=1,
        vars={"root": str(tmp_path)},
        max_gpu_hours=BUDGET,
    )
    handle = await env.client.start_workflow(
        NpaWorkflowRun.run, request, id="budget-kill", task_queue=task_queue
    )
    jobs = home / "local" / "jobs"
    await eventually(lambda: list(jobs.glob("*-2/supervisor.json")), timeout=60, what="training started")

    async def awaiting_training() -> bool:  # the await runs on the worker about to die
        pending = (await handle.describe()).raw_description.pending_activities
        return any(a.activity_type.name == "await_wave" and a.state == STARTED for a in pending)

    await eventually(awaiting_training, timeout=30, what="training's await started")
    started = time.monotonic()
    async with replaced_worker(worker, env, home, task_queue):
        status, failure_class, error = await asyncio.wait_for(result_of(env, "budget-kill"), 120)
        stopped_after = time.monotonic() - started
    assert (status, failure_class) == ("failed", "budget")
    assert "reached the run's GPU-hour budget" in error
    assert stopped_after < 30  # within a poll of its ~8 s share, not at the dead await's 60 s timeout
    ledger = json.loads((home / "runs" / "budget-kill" / "npa-workflow" / "runtime.json").read_text())
    train = ledger["waves"][-1]
    assert train["states"] == ["train"] and train["cancellation"]["state"] == "verified"


async def test_every_place_shows_one_gpu_hour_total_after_a_budget_stop_and_a_resume(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    sink = RecordingSink()
    install_metrics(sink)
    try:
        async with local_harness.worker():
            stopped = await local_harness.finish(
                await local_harness.start(
                    "runtime/gpu-budget.yaml",
                    run_id="one-number",
                    vars={"root": str(tmp_path)},
                    max_gpu_hours=BUDGET,
                )
            )
            assert stopped.status == "failed"
            (tmp_path / "fast").touch()
            resumed = await npaflow(env, local_harness, "resume", "one-number", "--max-gpu-hours", "1")
            assert resumed.returncode == 0, resumed.stderr
            summary = await env.client.get_workflow_handle("one-number", result_type=RunSummary).result()
            status = json.loads((await npaflow(env, local_harness, "status", "one-number", "--json")).stdout)
            listed = json.loads((await npaflow(env, local_harness, "list", "--since", "1h", "--json")).stdout)
    finally:
        install_metrics(None)
    ledger_dir = local_harness.home / "runs" / "one-number" / "npa-workflow"
    ledger = json.loads((ledger_dir / "runtime.json").read_text())["usage"]
    status_file = json.loads((ledger_dir / "status.json").read_text())["usage"]
    (row,) = [r for r in listed if r["run_id"] == "one-number"]
    total, failed = ledger["gpu_hours"], ledger["failed_gpu_hours"]
    assert total > 0 and stopped.ledger is not None and stopped.ledger.usage.gpu_hours > 0
    assert status_file["gpu_hours"] == total
    assert (summary.usage.gpu_hours, summary.usage.failed_gpu_hours) == (total, failed)
    assert (status["usage"]["gpu_hours"], status["usage"]["failed_gpu_hours"]) == (total, failed)
    assert (row["gpu_hours"], row["executions"]) == (total, 2)
    assert abs(sink.total(Metric.GPU_HOURS) - total) < 1e-3  # each hour counted once across executions
