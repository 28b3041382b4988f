"""Live progress: redrawn in place on a terminal (seen through a pseudo-terminal), plain lines otherwise."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pexpect
import pytest
from temporalio.testing import WorkflowEnvironment

from tests.e2e.test_cli_runs import npaflow
from tests.harness import SPECS, Harness
from tests.helpers import NPAFLOW, ROOT

pytestmark = pytest.mark.e2e


def run_on_a_terminal(
    env: WorkflowEnvironment, harness: Harness, args: list[str], screens: list[str]
) -> tuple[list[str], int]:
    """Run npaflow on a pseudo-terminal; wait for each pattern in turn; return what matched."""
    environ = {
        **os.environ,
        "TEMPORAL_ADDRESS": env.client.service_client.config.target_host,
        "NPAFLOW_TASK_QUEUE": harness.task_queue,
        "NPAFLOW_HOME": str(harness.home),
        "TERM": "xterm-256color",
    }
    child = pexpect.spawn(
        NPAFLOW, args, cwd=str(ROOT), env=environ, dimensions=(40, 160), encoding="utf-8", timeout=60
    )
    seen = []
    for pattern in screens:
        child.expect(pattern)
        seen.append(child.after)
    child.expect(pexpect.EOF)
    child.close()
    return seen, child.exitstatus


async def test_submit_wait_on_a_terminal_shows_the_running_state_while_its_job_sleeps(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    args = [
        "submit",
        str(SPECS / "runtime/local-steps.yaml"),
        "--run-id",
        "e2e-live",
        "--wait",
        "--poll-seconds",
        "0.2",
        "--var",
        f"root={tmp_path}",
        "--var",
        "sleep=6",
    ]
    async with local_harness.worker():
        seen, code = await asyncio.to_thread(
            run_on_a_terminal,
            env,
            local_harness,
            args,
            [
                r"running slow attempt 1: job w1-2 on worker w1 for \d+s",
                r"waves: 1 done of 2 known",
                r"status: succeeded",
            ],
        )
    assert code == 0
    assert seen[0].startswith("running slow")


async def test_submit_wait_into_a_pipe_prints_one_line_per_change_with_decisions_and_states(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        result = await npaflow(
            env,
            local_harness,
            "submit",
            "specs/examples/gate-loop.yaml",
            "--run-id",
            "e2e-lines",
            "--wait",
            "--poll-seconds",
            "0.2",
            "--var",
            f"root={tmp_path}",
        )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "\x1b[" not in result.stdout  # no terminal control codes in a pipe
    assert any(line.endswith("run e2e-lines: running") for line in lines)
    assert any("decision promote_checkpoint from state quality-gate <- file://" in line for line in lines)
    summary = lines[lines.index("status: succeeded") :]
    decisions = [line for line in summary if line.startswith("decision: ")]
    assert decisions and all(line.endswith(("(state quality-gate)", "(state route)")) for line in decisions)
    assert any(line.endswith("(state route)") for line in decisions)


async def test_status_watch_into_a_pipe_follows_a_running_run_to_its_end(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        handle = await local_harness.start(
            "runtime/local-steps.yaml",
            run_id="e2e-watch",
            vars={"root": str(tmp_path), "sleep": "3"},
            poll_seconds=0.2,
        )
        result = await npaflow(env, local_harness, "status", "e2e-watch", "--watch")
        await handle.result()
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.endswith("slow attempt 1: succeeded job w1-2 (wave 002)") for line in lines)
    assert any(line.endswith("last attempt 1: succeeded job w1-3 (wave 003)") for line in lines)
    assert "run e2e-watch: succeeded" in lines  # the final status, after the changes
