"""Crash safety and determinism: a killed worker never causes a second launch; histories replay."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer

from activities.backends.local.jobs import JOB_FILE, LocalJobRecord, read_model
from npaflow.runtime.request import RunRequest
from npaflow.runtime.summary import RunSummary
from npaflow.temporal.data_converter import DATA_CONVERTER
from tests.harness import SPECS, Harness, replaced_worker, start_worker_process
from tests.helpers import COLD_WORKER_SECONDS, ROOT, eventually
from worker.main import workflow_runner
from worker.replay import histories_in
from workflows_def import WORKFLOWS, NpaWorkflowRun
from workflows_def.patches import LOCAL_LOAD

pytestmark = pytest.mark.integration

HISTORIES = ROOT / "tests" / "histories"


async def wait_for(directory: Path, pattern: str, timeout: float = 30.0) -> Path:
    """The first file matching `pattern` under `directory`, once one exists."""
    return await eventually(
        lambda: next(iter(sorted(directory.glob(pattern))), None),
        timeout=timeout,
        what=f"{directory}/{pattern}",
    )


def job_names(home: Path) -> list[str]:
    jobs = sorted((home / "local" / "jobs").glob("*-[0-9]*"), key=lambda p: int(p.name.rsplit("-", 1)[1]))
    return [read_model(job / JOB_FILE, LocalJobRecord).job_name for job in jobs]


async def test_killed_worker_mid_wave_resumes_without_a_second_launch(
    env: WorkflowEnvironment, home: Path, tmp_path: Path
) -> None:
    task_queue = f"tq-crash-{uuid.uuid4().hex[:6]}"
    first = start_worker_process(env, home, task_queue)
    request = RunRequest(
        spec=(SPECS / "runtime/local-steps.yaml").read_text(),
        poll_seconds=0.2,
        vars={"root": str(tmp_path), "sleep": "4"},
    )
    handle = await env.client.start_workflow(
        NpaWorkflowRun.run, request, id="rt-crash", task_queue=task_queue
    )
    await wait_for(home / "local" / "jobs", "*-2/supervisor.json", timeout=COLD_WORKER_SECONDS)
    async with replaced_worker(first, env, home, task_queue):
        summary = await asyncio.wait_for(handle.result(), timeout=90)
    assert summary.status == "succeeded"
    assert job_names(home) == ["rt-crash-01-first", "rt-crash-02-slow", "rt-crash-03-last"]
    assert [w.attempt for w in summary.waves] == [1, 1, 1]


async def test_recorded_histories_replay_deterministically() -> None:
    histories = histories_in(HISTORIES)  # each under the id it ran as, as `npaflow replay-check` reads them
    replayer = Replayer(workflows=WORKFLOWS, data_converter=DATA_CONVERTER, workflow_runner=workflow_runner())
    for history in histories:
        result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
        assert result.replay_failure is None, f"{history.workflow_id}: {result.replay_failure}"


async def test_fresh_example_run_history_replays(local_harness: Harness, tmp_path: Path) -> None:
    outcome = await local_harness.run(
        str((ROOT / "specs/examples/gate-loop.yaml").read_text()),
        run_id="rt-replay",
        vars={"root": str(tmp_path)},
    )
    assert outcome.status == "succeeded"
    history = await outcome.handle.fetch_history()
    replayer = Replayer(
        workflows=[NpaWorkflowRun], data_converter=DATA_CONVERTER, workflow_runner=workflow_runner()
    )
    result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None
    assert isinstance(outcome.summary, RunSummary)


def patches_and_activities(history: WorkflowHistory) -> tuple[list[str], list[str], list[str]]:
    """The patch ids, local activity types and activity types a history recorded, in order."""
    patches, local, scheduled = [], [], []
    for event in history.events:
        if event.HasField("marker_recorded_event_attributes"):
            marker = event.marker_recorded_event_attributes
            if marker.marker_name == "core_patch":
                patches.append(json.loads(marker.details["patch-data"].payloads[0].data)["id"])
            else:
                local.append(json.loads(marker.details["data"].payloads[0].data)["activity_type"])
        elif event.HasField("activity_task_scheduled_event_attributes"):
            scheduled.append(event.activity_task_scheduled_event_attributes.activity_type.name)
    return patches, local, scheduled


async def test_a_new_run_loads_its_spec_in_a_local_activity_behind_one_patch(
    local_harness: Harness, tmp_path: Path
) -> None:
    outcome = await local_harness.run(
        (SPECS / "runtime/local-steps.yaml").read_text(), run_id="rt-patches", vars={"root": str(tmp_path)}
    )
    assert outcome.status == "succeeded"
    history = await outcome.handle.fetch_history()
    patches, local, scheduled = patches_and_activities(history)
    assert patches == [LOCAL_LOAD]  # the earlier patches are implied, not recorded again
    assert local[0] == "load_spec" and "load_spec" not in scheduled
    memo = await (await outcome.handle.describe()).memo()
    assert "gpu_hours" in memo  # what the implied final-usage patch adds


async def test_resumed_run_adopts_the_job_an_ended_execution_left_running(
    local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        handle = await local_harness.start(
            "runtime/local-steps.yaml",
            run_id="rt-adopt",
            vars={"root": str(tmp_path), "sleep": "3"},
            poll_seconds=0.2,
        )
        await wait_for(local_harness.home / "local" / "jobs", "*-2/supervisor.json")
        # The ledger records wave 1's success with wave 2's launch: terminate after that export
        # (terminated before it, wave 1 is adopted, not replayed: also no second launch).
        runtime = local_harness.home / "runs" / "rt-adopt" / "npa-workflow" / "runtime.json"
        await eventually(
            lambda: runtime.exists() and len(json.loads(runtime.read_text())["waves"]) >= 2,
            what="wave 2's launch exported",
        )
        await handle.terminate(reason="operator terminated mid-wave")
        resumed = await local_harness.client.start_workflow(
            NpaWorkflowRun.run,
            RunRequest(
                spec=(SPECS / "runtime/local-steps.yaml").read_text(),
                poll_seconds=0.2,
                vars={"root": str(tmp_path), "sleep": "3"},
            ),
            id="rt-adopt",
            task_queue=local_harness.task_queue,
        )
        summary = await resumed.result()
    assert summary.status == "succeeded"
    first, slow, last = summary.waves
    assert first.replayed and first.job_id == "w1-1"
    assert slow.adopted and slow.job_id == "w1-2" and slow.attempt == 1
    assert last.job_id == "w1-3"
    assert len(job_names(local_harness.home)) == 3
