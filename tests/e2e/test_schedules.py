"""`npaflow schedule`: a spec on an interval over Temporal Schedules; runs are ordinary runs."""

from __future__ import annotations

import json
import subprocess
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.e2e.test_cli_runs import npaflow
from tests.harness import TEMPORAL_BIN, Harness
from tests.helpers import eventually

pytestmark = pytest.mark.e2e


def slow_spec(tmp_path: Path, name: str) -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        f"apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {{name: {name}}}\n"
        "states:\n  nap: {terminal: true, run: {shell: 'sleep 3'}}\n"
    )
    return str(path)


async def test_an_interval_schedule_starts_runs_that_succeed_and_skips_while_one_is_running(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    name, spec = f"sched-{uuid.uuid4().hex[:6]}", f"slow-{uuid.uuid4().hex[:6]}"
    async with local_harness.worker():
        created = await npaflow(
            env, local_harness, "schedule", "create", name, slow_spec(tmp_path, spec), "--every", "1s",
            "--poll-seconds", "0.2",
        )  # fmt: skip
        assert created.returncode == 0, created.stderr
        try:

            async def two_succeeded() -> list[dict]:
                result = await npaflow(
                    env, local_harness, "list", "--spec", spec, "--phase", "succeeded", "--json"
                )
                rows = json.loads(result.stdout)
                return rows if len(rows) >= 2 else []

            runs = await eventually(
                two_succeeded, timeout=60, interval=1, what="two scheduled runs succeeded"
            )
            described = await npaflow(env, local_harness, "schedule", "describe", name, "--json")
        finally:
            await npaflow(env, local_harness, "schedule", "delete", name)
    assert all(run["run_id"].startswith(f"{name}-20") and run["run_id"].endswith("Z") for run in runs)
    summary = json.loads(described.stdout)
    assert (summary["when"], summary["overlap"], summary["problem"]) == (["every 1s"], "skip", "")
    assert summary["skipped_for_overlap"] > 0  # 3 s runs, one start a second: skipped, never piled up
    starts = sorted((run["started_at"], run["duration_seconds"]) for run in runs)
    assert len({start for start, _ in starts}) == len(starts)


async def test_a_schedule_with_an_invalid_spec_is_refused_and_nothing_is_created(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: bad}\nstates: {}\n")
    name = f"sched-{uuid.uuid4().hex[:6]}"
    result = await npaflow(env, local_harness, "schedule", "create", name, str(bad), "--every", "1h")
    assert result.returncode == 2 and "bad.yaml" in result.stderr
    described = await npaflow(env, local_harness, "schedule", "describe", name)
    assert described.returncode == 2 and f"no schedule named '{name}'" in described.stderr


def temporal_schedule(
    env: WorkflowEnvironment, name: str, workflow_type: str, queue: str, *extra: str
) -> None:
    """`temporal schedule create`, yearly (no action of its own fires during a test): made outside npaflow."""
    subprocess.run(
        [
            str(TEMPORAL_BIN), "schedule", "create", "--schedule-id", name, "--cron", "0 0 1 1 *",
            "--type", workflow_type, "--task-queue", queue, "--workflow-id", name, *extra,
            "--address", env.client.service_client.config.target_host,
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip


async def test_a_schedule_made_outside_npaflow_with_an_input_no_run_accepts_is_described_as_such(
    env: WorkflowEnvironment, local_harness: Harness
) -> None:
    name = f"sched-{uuid.uuid4().hex[:6]}"
    temporal_schedule(
        env, name, "NpaWorkflowRun", local_harness.task_queue, "--input", '{"spec": "x", "poll_second": 1}'
    )
    try:
        described = await npaflow(env, local_harness, "schedule", "describe", name, "--json")
    finally:
        await npaflow(env, local_harness, "schedule", "delete", name)
    problem = json.loads(described.stdout)["problem"]
    assert problem.startswith("every run it starts is refused, its input is an invalid RunRequest: ")
    assert "poll_second: not a field it takes" in problem


async def test_a_schedule_of_another_workflow_type_is_never_deleted_paused_or_triggered_by_npaflow(
    env: WorkflowEnvironment, local_harness: Harness
) -> None:
    name = f"other-{uuid.uuid4().hex[:6]}"
    temporal_schedule(env, name, "SomeoneElsesWorkflow", "elsewhere")
    try:
        refused = [
            await npaflow(env, local_harness, "schedule", action, name)
            for action in ("delete", "pause", "trigger")
        ]
        still_there = await env.client.get_schedule_handle(name).describe()
    finally:
        await env.client.get_schedule_handle(name).delete()
    assert [r.returncode for r in refused] == [2, 2, 2]
    assert all("starts SomeoneElsesWorkflow, not npaflow runs" in r.stderr for r in refused)
    assert not still_there.schedule.state.paused and still_there.info.num_actions == 0


async def test_a_schedule_needs_exactly_one_of_cron_and_every(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    spec = slow_spec(tmp_path, "either")
    both = await npaflow(
        env, local_harness, "schedule", "create", "x", spec, "--every", "1h", "--cron", "0 3 * * *"
    )
    neither = await npaflow(env, local_harness, "schedule", "create", "x", spec)
    assert (both.returncode, neither.returncode) == (2, 2)
    assert "give exactly one of --cron EXPR or --every DURATION" in both.stderr


async def new_schedule(
    env: WorkflowEnvironment, local_harness: Harness, spec: str, *when: str
) -> tuple[str, subprocess.CompletedProcess[str]]:
    """A schedule of `spec` (`when`: --cron or --every) under a fresh name, and what create answered."""
    name = f"sched-{uuid.uuid4().hex[:6]}"
    return name, await npaflow(env, local_harness, "schedule", "create", name, spec, *when)


async def test_pause_trigger_and_unpause_act_on_the_schedule(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    name, created = await new_schedule(env, local_harness, slow_spec(tmp_path, "p"), "--cron", "0 3 * * *")
    assert created.returncode == 0, created.stderr
    try:
        assert (
            await npaflow(env, local_harness, "schedule", "pause", name, "--note", "maintenance")
        ).returncode == 0
        paused = json.loads(
            (await npaflow(env, local_harness, "schedule", "describe", name, "--json")).stdout
        )
        assert (paused["paused"], paused["note"]) == (True, "maintenance")
        assert (await npaflow(env, local_harness, "schedule", "trigger", name)).returncode == 0
        assert (await npaflow(env, local_harness, "schedule", "unpause", name)).returncode == 0

        async def listed() -> bool:  # schedule listings are eventually consistent
            result = await npaflow(env, local_harness, "schedule", "list")
            return any(
                line.startswith(f"{name}  cron 0 3 * * *  next ") for line in result.stdout.splitlines()
            )

        await eventually(listed, timeout=30, interval=1, what="the schedule listed, unpaused")
    finally:
        await npaflow(env, local_harness, "schedule", "delete", name)


async def test_a_cron_that_matches_no_time_to_come_is_refused_and_nothing_is_created(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    spec = slow_spec(tmp_path, "never")
    name, refused = await new_schedule(env, local_harness, spec, "--cron", "0 3 31 2 *")
    described = await npaflow(env, local_harness, "schedule", "describe", name)
    assert refused.returncode == 2
    assert "--cron '0 3 31 2 *' matches no time to come" in refused.stderr
    assert "nothing was created" in refused.stderr and "created:" not in refused.stdout
    assert described.returncode == 2 and "no schedule named" in described.stderr


async def test_create_shows_the_next_runs_as_the_server_computed_them(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    name, created = await new_schedule(env, local_harness, slow_spec(tmp_path, "n"), "--cron", "15 2 * * *")
    try:
        assert created.returncode == 0, created.stderr
        (line,) = [line for line in created.stdout.splitlines() if line.startswith("next runs: ")]
        times = line.removeprefix("next runs: ").split(", ")
        assert len(times) == 3 and all(t.endswith("T02:15:00Z") for t in times)
    finally:
        await npaflow(env, local_harness, "schedule", "delete", name)


async def test_a_backfill_past_max_runs_is_refused_with_the_count_and_starts_nothing(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    name, created = await new_schedule(env, local_harness, slow_spec(tmp_path, "bf"), "--every", "1m")
    try:
        assert created.returncode == 0, created.stderr
        window = ("--start", "2016-01-01T00:00:00Z")
        decade = await npaflow(
            env, local_harness, "schedule", "backfill", name, *window, "--end", "2026-01-01T00:00:00Z"
        )
        empty = await npaflow(
            env, local_harness, "schedule", "backfill", name, *window, "--end", "2016-01-01T00:00:30Z"
        )
        described = await env.client.get_schedule_handle(name).describe()
    finally:
        await npaflow(env, local_harness, "schedule", "delete", name)
    assert decade.returncode == 2
    assert "would start more than 100 runs (1,000 counted so far, overlap allow-all)" in decade.stderr
    assert empty.returncode == 0 and "no scheduled time between" in empty.stdout
    # The schedule's own minute may fire meanwhile; no action is a backfilled time.
    window_end = datetime(2026, 1, 1, 0, 1, tzinfo=UTC)
    backfilled = [a for a in described.info.recent_actions if a.scheduled_at <= window_end]
    assert backfilled == [] and described.info.num_actions <= 1


async def test_a_schedule_another_client_named_with_control_characters_is_listed_and_described_escaped(
    env: WorkflowEnvironment, local_harness: Harness
) -> None:
    name = f"sched-{uuid.uuid4().hex[:6]}\x1b]0;PWNED\x07"
    temporal_schedule(env, name, "NpaWorkflowRun", local_harness.task_queue, "--input", '{"spec": "x"}')
    try:
        listed = await npaflow(env, local_harness, "schedule", "list")
        described = await npaflow(env, local_harness, "schedule", "describe", name)
    finally:
        await npaflow(env, local_harness, "schedule", "delete", name)
    shown = name.replace("\x1b", "\\x1b").replace("\x07", "\\x07")
    assert shown in listed.stdout and f"name: {shown}" in described.stdout
    assert "\x1b" not in listed.stdout + described.stdout
