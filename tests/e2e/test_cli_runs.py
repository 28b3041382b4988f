"""The `npaflow` shim end to end: submit --wait exit codes, status, cancel, resume, logs."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

from tests.harness import SPECS, Harness
from tests.helpers import NPAFLOW, ROOT, eventually
from tests.integration.fake_skypilot import FakeSkyPilotApi, statuses

pytestmark = pytest.mark.e2e


async def npaflow_process(
    env: WorkflowEnvironment, harness: Harness, *args: str, **popen: Any
) -> asyncio.subprocess.Process:
    """The CLI running against the test's dev server and worker, its output piped."""
    environ = {
        **os.environ,
        "TEMPORAL_ADDRESS": env.client.service_client.config.target_host,
        "NPAFLOW_TASK_QUEUE": harness.task_queue,
        "NPAFLOW_HOME": str(harness.home),
    }
    return await asyncio.create_subprocess_exec(
        NPAFLOW,
        *args,
        cwd=ROOT,
        env=environ,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        **popen,
    )


async def npaflow(
    env: WorkflowEnvironment, harness: Harness, *args: str, timeout: float = 600
) -> subprocess.CompletedProcess:
    """Run the CLI to its end; one that hangs past `timeout` is killed and fails the test."""
    process = await npaflow_process(env, harness, *args)
    try:
        out, err = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise AssertionError(f"npaflow {' '.join(args)} did not exit within {timeout:g} s") from None
    return subprocess.CompletedProcess(args, process.returncode, out.decode(), err.decode())


async def test_submit_wait_runs_the_gate_loop_example_and_exits_zero(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        result = await npaflow(
            env,
            local_harness,
            "submit",
            "specs/examples/gate-loop.yaml",
            "--run-id",
            "e2e-gate",
            "--wait",
            "--poll-seconds",
            "0.2",
            "--var",
            f"root={tmp_path}",
            "--json",
        )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["status"] == "succeeded"
    assert [w["states"][0] for w in summary["waves"]][-2:] == ["route", "publish"]
    assert (tmp_path / "e2e-gate" / "published.txt").exists()


async def test_submit_wait_exits_one_when_the_run_fails(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    spec = tmp_path / "fail.yaml"
    spec.write_text(
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: fail}\n"
        "states:\n  boom: {terminal: true, run: {shell: exit 3}}\n"
    )
    async with local_harness.worker():
        result = await npaflow(
            env, local_harness, "submit", str(spec), "--run-id", "e2e-fail", "--wait", "--poll-seconds", "0.2"
        )
    assert result.returncode == 1
    assert "status: failed" in result.stdout
    assert "reached terminal status FAILED" in result.stdout


async def test_a_failed_run_names_the_exit_code_and_log_tail_and_what_to_do_next(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    spec = tmp_path / "flaky.yaml"
    spec.write_text(
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: flaky}\n"
        "states:\n  second: {terminal: true, run: {shell: 'echo second - not fixed yet >&2; exit 3'}}\n"
    )
    async with local_harness.worker():
        result = await npaflow(
            env,
            local_harness,
            "submit",
            str(spec),
            "--run-id",
            "e2e-flaky",
            "--wait",
            "--poll-seconds",
            "0.2",
        )
    assert result.returncode == 1
    assert (
        "state second: job w1-1 reached terminal status FAILED: run exited with code 3 on node 0 of 1"
        in result.stdout
    )
    assert "| second - not fixed yet" in result.stdout  # the end of its log, quoted
    assert "why: payload: the job's own code or data failed" in result.stdout
    assert "next: npaflow logs e2e-flaky --state second" in result.stdout
    assert "npaflow resume e2e-flaky" in result.stdout


async def test_submit_rejects_an_invalid_spec_before_starting_anything(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text("apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nstates:\n  a: {run: {shell: x}}\n")
    result = await npaflow(env, local_harness, "submit", str(spec), "--run-id", "e2e-bad")
    assert result.returncode == 2
    assert "at least one terminal" in result.stderr
    with pytest.raises(Exception, match="not found"):
        await env.client.get_workflow_handle("e2e-bad").describe()


async def slow_waiting_submit(
    env: WorkflowEnvironment, harness: Harness, run_id: str, root: Path
) -> asyncio.Future[subprocess.CompletedProcess]:
    """`submit --wait` of a run whose second job sleeps 30 s, once that job is running."""
    waiting = asyncio.ensure_future(
        npaflow(
            env,
            harness,
            *("submit", str(SPECS / "runtime/local-steps.yaml"), "--run-id", run_id, "--wait"),
            *("--poll-seconds", "0.2", "--var", f"root={root}", "--var", "sleep=30"),
        )
    )
    slow = harness.home / "local" / "jobs" / "w1-2" / "supervisor.json"
    await eventually(slow.exists, timeout=30, what="the slow job running")
    return waiting


async def test_a_waiting_submit_says_terminated_not_cancelled_when_the_run_is_terminated(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        waiting = await slow_waiting_submit(env, local_harness, "e2e-term", tmp_path)
        await env.client.get_workflow_handle("e2e-term").terminate(reason="operator pressed Terminate")
        result = await waiting
    assert result.returncode == 130
    assert "status: terminated\nrun_id: e2e-term\nreason: operator pressed Terminate" in result.stdout
    assert "status: cancelled" not in result.stdout and "next: npaflow status e2e-term" in result.stdout


async def test_cancel_ends_a_waiting_submit_with_exit_130(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        waiting = await slow_waiting_submit(env, local_harness, "e2e-cancel", tmp_path)
        cancel = await npaflow(env, local_harness, "cancel", "e2e-cancel", "--reason", "e2e")
        result = await waiting
        status = await npaflow(env, local_harness, "status", "e2e-cancel", "--json")
    assert cancel.returncode == 0, cancel.stderr
    assert result.returncode == 130
    assert json.loads(status.stdout)["execution_status"] == "CANCELED"
    assert not (tmp_path / "e2e-cancel" / "slow.txt").exists()


async def test_resume_restarts_a_failed_run_and_replays_completed_waves(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        first = await npaflow(
            env,
            local_harness,
            "submit",
            str(SPECS / "runtime/flaky-last.yaml"),
            "--run-id",
            "e2e-resume",
            "--wait",
            "--poll-seconds",
            "0.2",
            "--var",
            f"root={tmp_path}",
        )
        assert first.returncode == 1
        (tmp_path / "allow").write_text("ok")
        resumed = await npaflow(env, local_harness, "resume", "e2e-resume", "--wait")
        summary = await env.client.get_workflow_handle("e2e-resume").result()
        logs = await npaflow(env, local_harness, "logs", "e2e-resume", "--state", "last")
    assert resumed.returncode == 0, resumed.stderr  # --wait: followed to the end, its outcome the exit code
    assert "restarted run e2e-resume" in resumed.stdout and "status: succeeded" in resumed.stdout
    assert summary["status"] == "succeeded"
    first_wave, failed_wave, last_wave = summary["waves"]  # the attempt that failed is shown, not rerun
    assert first_wave["replayed"] is True and first_wave["job_id"] == "w1-1"
    assert (failed_wave["attempt"], failed_wave["status"], failed_wave["job_id"]) == (1, "failed", "w1-2")
    assert failed_wave["replayed"] is True
    assert (last_wave["attempt"], last_wave["job_id"]) == (2, "w1-3")
    assert len(list((local_harness.home / "local" / "jobs").glob("w1-*"))) == 3
    assert "rank 0 done" in logs.stdout


async def test_a_completed_run_id_is_never_rerun(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        first = await npaflow(
            env,
            local_harness,
            "submit",
            str(SPECS / "runtime/fanout.yaml"),
            "--run-id",
            "e2e-once",
            "--wait",
            "--poll-seconds",
            "0.2",
        )
        again = await npaflow(
            env, local_harness, "submit", str(SPECS / "runtime/fanout.yaml"), "--run-id", "e2e-once"
        )
    assert first.returncode == 0
    assert again.returncode == 2
    assert "already completed successfully" in again.stderr
    assert "Traceback" not in again.stderr


async def test_a_duplicate_submit_shows_the_running_run_and_exits_3_and_attach_follows_it(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    submit = [
        "submit",
        str(SPECS / "runtime/gated-steps.yaml"),
        "--run-id",
        "e2e-dup",
        "--poll-seconds",
        "0.2",
        "--var",
        f"root={tmp_path}",
        "--var",
        "label=a",
    ]
    async with local_harness.worker():
        first = await npaflow(env, local_harness, *submit)
        await eventually(
            lambda: (local_harness.home / "local" / "jobs" / "w1-1").exists(), what="the run started"
        )
        again = await npaflow(env, local_harness, *submit)
        other = await npaflow(env, local_harness, *submit[:-1], "label=b")
        attach = await npaflow_process(env, local_harness, *submit, "--attach", "--wait")
        assert attach.stdout is not None
        following = await asyncio.wait_for(attach.stdout.readline(), 60)  # it follows the run now
        (tmp_path / "release").write_text("go")
        out, err = await attach.communicate()
    assert first.returncode == 0, first.stderr
    assert again.returncode == 3
    assert "run e2e-dup is already running" in again.stdout and "--attach" in again.stdout
    assert "current: " in again.stdout and "ledger: " in again.stdout  # its status
    assert other.returncode == 2
    assert "label: 'a' -> 'b'" in other.stderr and "Traceback" not in other.stderr
    assert attach.returncode == 0, err.decode()
    assert following and "status: succeeded" in out.decode()
    jobs = sorted(p.name for p in (local_harness.home / "local" / "jobs").iterdir() if p.is_dir())
    assert jobs == ["w1-1", "w1-2", "w1-3"]  # the duplicate started nothing


async def test_restarting_a_failed_run_with_a_different_plan_is_refused(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    changed = tmp_path / "changed.yaml"
    changed.write_text((SPECS / "runtime/flaky-last.yaml").read_text().replace("echo first", "echo other"))
    async with local_harness.worker():
        first = await npaflow(
            env,
            local_harness,
            "submit",
            str(SPECS / "runtime/flaky-last.yaml"),
            "--run-id",
            "e2e-fp",
            "--wait",
            "--poll-seconds",
            "0.2",
            "--var",
            f"root={tmp_path}",
        )
        second = await npaflow(
            env,
            local_harness,
            "submit",
            str(changed),
            "--run-id",
            "e2e-fp",
            "--wait",
            "--poll-seconds",
            "0.2",
            "--var",
            f"root={tmp_path}",
        )
    assert first.returncode == 1
    assert second.returncode == 1
    output = second.stdout + second.stderr
    assert "its plan changed since it ran" in output
    assert "state changed: first: shell: " in output  # the refusal says what changed
    assert "completed wave affected: 001|serial|:first:-" in output
    assert "run it under a new run id" in output  # --accept-changes cannot help here
    assert len(list((local_harness.home / "local" / "jobs").glob("w1-*"))) == 2


async def test_resume_onto_an_edited_spec_lists_the_change_and_reruns_only_the_changed_step(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    original = (SPECS / "runtime/flaky-last.yaml").read_text()
    edited = tmp_path / "edited.yaml"
    edited.write_text(original.replace("test -f {{config.root}}/allow && echo", "echo fixed"))
    async with local_harness.worker():
        failed = await npaflow(
            env,
            local_harness,
            "submit",
            str(SPECS / "runtime/flaky-last.yaml"),
            "--run-id",
            "e2e-diff",
            "--wait",
            "--poll-seconds",
            "0.2",
            "--var",
            f"root={tmp_path}",
        )
        refused = await npaflow(env, local_harness, "resume", "e2e-diff", "--spec", str(edited))
        accepted = await npaflow(
            env, local_harness, "resume", "e2e-diff", "--spec", str(edited), "--accept-changes"
        )
        summary = await env.client.get_workflow_handle("e2e-diff").result()
    assert failed.returncode == 1
    assert refused.returncode == 2 and "--accept-changes" in refused.stderr
    changes = [line.strip() for line in refused.stdout.splitlines()[1:]]
    assert changes == [
        "state changed: last: shell: test -f {{root}}/allow && echo rank $SKYPILOT_NODE_RANK done -> "
        "echo fixed rank $SKYPILOT_NODE_RANK done".replace("{{root}}", str(tmp_path)),
    ]
    assert accepted.returncode == 0, accepted.stderr
    assert summary["status"] == "succeeded"
    first, failed_last, last = summary["waves"]
    assert first["replayed"] is True and first["job_id"] == "w1-1"
    assert (failed_last["attempt"], failed_last["status"], failed_last["replayed"]) == (1, "failed", True)
    assert (last["attempt"], last["job_id"]) == (2, "w1-3")
    ledger = json.loads(
        (local_harness.home / "runs" / "e2e-diff" / "npa-workflow" / "runtime.json").read_text()
    )
    (change,) = ledger["plan_changes"]
    assert change["changes"][0].startswith("state changed: last: shell: ")


async def test_a_run_that_ends_for_lack_of_capacity_exits_75(
    env: WorkflowEnvironment, fake_sky_harness: Harness, fake_sky: FakeSkyPilotApi
) -> None:
    fake_sky.default = [statuses("FAILED_NO_RESOURCE")]
    async with fake_sky_harness.worker():
        result = await npaflow(
            env,
            fake_sky_harness,
            "submit",
            "tests/specs/runtime/sky-one.yaml",
            "--run-id",
            "e2e-capacity",
            "--wait",
            "--backend",
            "skypilot",
            "--max-infrastructure-recoveries",
            "0",
            "--poll-seconds",
            "0.2",
        )
    assert result.returncode == 75, result.stdout + result.stderr
    assert "FAILED_NO_RESOURCE" in result.stdout


async def test_other_infrastructure_failures_exit_one_not_75(
    env: WorkflowEnvironment, fake_sky_harness: Harness, fake_sky: FakeSkyPilotApi
) -> None:
    fake_sky.default = [statuses("FAILED_CONTROLLER")]
    async with fake_sky_harness.worker():
        result = await npaflow(
            env,
            fake_sky_harness,
            "submit",
            "tests/specs/runtime/sky-one.yaml",
            "--run-id",
            "e2e-controller",
            "--wait",
            "--backend",
            "skypilot",
            "--max-infrastructure-recoveries",
            "0",
            "--poll-seconds",
            "0.2",
        )
    assert result.returncode == 1, result.stdout + result.stderr


async def test_a_skypilot_worker_without_an_endpoint_refuses_to_start(
    env: WorkflowEnvironment, local_harness: Harness
) -> None:
    environ = {k: v for k, v in os.environ.items() if k != "SKYPILOT_API_SERVER_ENDPOINT"}
    process = await asyncio.create_subprocess_exec(
        NPAFLOW,
        "worker",
        "--backend",
        "local,skypilot",
        cwd=ROOT,
        env={
            **environ,
            "TEMPORAL_ADDRESS": env.client.service_client.config.target_host,
            "NPAFLOW_HOME": str(local_harness.home),
        },
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(process.communicate(), timeout=30)
    assert process.returncode == 2
    assert "SKYPILOT_API_SERVER_ENDPOINT" in err.decode()


async def test_logs_print_each_local_job_read_on_its_worker(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        await local_harness.finish(
            await local_harness.start(
                "runtime/local-steps.yaml", run_id="e2e-logs", vars={"root": str(tmp_path), "sleep": "0"}
            )
        )
        result = await npaflow(env, local_harness, "logs", "e2e-logs", "--state", "slow")
        unknown = await npaflow(env, local_harness, "logs", "e2e-logs", "--state", "slwo")
    assert result.returncode == 0, result.stderr
    assert "### 002|serial|:slow:- attempt 1 job w1-2" in result.stdout
    assert "first" not in result.stdout.split("###", 1)[1].splitlines()[0]
    assert unknown.returncode == 2
    assert "has no job of state 'slwo' (did you mean 'slow'?); states with jobs: " in unknown.stderr


TITLE_CHANGER = r"""
apiVersion: npa.workflow/v0.0.1
kind: Workflow
metadata: {name: noisy}
states:
  noisy:
    run:
      shell: |
        printf '\033]0;PWNED\007\033[31mred\033[0m\033[2J done\n'
    terminal: true
"""


async def test_logs_keep_a_jobs_colours_and_show_its_other_escape_sequences_unless_raw(
    env: WorkflowEnvironment, local_harness: Harness
) -> None:
    async with local_harness.worker():
        outcome = await local_harness.finish(await local_harness.start(TITLE_CHANGER, run_id="e2e-noisy"))
        shown = await npaflow(env, local_harness, "logs", "e2e-noisy")
        raw = await npaflow(env, local_harness, "logs", "e2e-noisy", "--raw")
    assert outcome.status == "succeeded", outcome.error
    assert "\\x1b]0;PWNED\\x07\x1b[31mred\x1b[0m\\x1b[2J done" in shown.stdout
    assert "\x1b]0;PWNED\x07\x1b[31mred\x1b[0m\x1b[2J done" in raw.stdout


async def test_run_commands_leave_a_workflow_of_another_type_under_that_id_alone(
    env: WorkflowEnvironment, local_harness: Harness
) -> None:
    foreign = await env.client.start_workflow(
        "SomeoneElsesWorkflow", id=f"foreign-{uuid.uuid4().hex[:6]}", task_queue="elsewhere"
    )
    try:
        answers = [
            await npaflow(env, local_harness, command, foreign.id)
            for command in ("cancel", "pause", "resume", "status", "logs")
        ]
        description = await foreign.describe()
        events = [event async for event in foreign.fetch_history_events()]
    finally:
        await foreign.terminate("test over")
    assert [a.returncode for a in answers] == [2] * 5
    assert all(
        f"'{foreign.id}' is a SomeoneElsesWorkflow workflow, not an npaflow run" in a.stderr for a in answers
    )
    assert description.status == WorkflowExecutionStatus.RUNNING
    kinds = {event.WhichOneof("attributes") for event in events}
    assert (
        not {
            "workflow_execution_signaled_event_attributes",
            "workflow_execution_cancel_requested_event_attributes",
        }
        & kinds
    )
