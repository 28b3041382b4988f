"""Every mistake a user can make on the command line is one or two lines and exit 2, never a traceback.

Table-driven: each row is a command with one mistake (a bad schedule, an unknown
namespace, a dead server, a typo in a flag or the spec), run as a user runs it
against a real dev server; nothing may start that should not.
"""

from __future__ import annotations

import asyncio
import os

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.e2e.test_cli_runs import NPAFLOW
from tests.harness import ROOT, Harness
from tests.helpers import free_port

pytestmark = pytest.mark.e2e

GATE = "specs/examples/gate-loop.yaml"
NS = ("--namespace", "no-such-ns")

MISTAKES: dict[str, tuple[str, ...]] = {
    "cron hour out of range": ("schedule", "create", "m1", GATE, "--cron", "0 25 * * *"),
    "cron word": ("schedule", "create", "m2", GATE, "--cron", "daily"),
    "interval unit": ("schedule", "create", "m3", GATE, "--every", "5x"),
    "catchup duration": ("schedule", "create", "m4", GATE, "--every", "1h", "--catchup-window", "soon"),
    "list unknown namespace": ("list", *NS),
    "submit unknown namespace": ("submit", GATE, *NS),
    "status unknown namespace": ("status", "r1", *NS),
    "cancel unknown namespace": ("cancel", "r1", *NS),
    "pause unknown namespace": ("pause", "r1", *NS),
    "resume unknown namespace": ("resume", "r1", *NS),
    "logs unknown namespace": ("logs", "r1", *NS),
    "artifacts unknown namespace": ("artifacts", "r1", *NS),
    "schedule list unknown namespace": ("schedule", "list", *NS),
    "schedule describe unknown namespace": ("schedule", "describe", "x", *NS),
    "deployment status unknown namespace": ("deployment", "status", *NS),
    "status of no run": ("status", "no-such-run"),
    "cancel of no run": ("cancel", "no-such-run"),
    "misspelt var": ("submit", GATE, "--var", "treshold=80"),
    "var without value": ("submit", GATE, "--var", "threshold"),
    "missing spec": ("submit", "specs/examples/no-such.yaml"),
    "bad max gpu hours": ("submit", GATE, "--max-gpu-hours", "-1"),
    "report unknown namespace": ("report", "r1", *NS),
    "report of no run": ("report", "no-such-run"),
    "report out where nothing can be written": ("report", "no-such-run", "--out", "/proc/x/report.html"),
    "ui beyond loopback without a token": ("ui", "--host", "0.0.0.0"),
    "ui port out of range": ("ui", "--port", "70000"),
}
DEAD_SERVER = ("list", "status r1", "submit " + GATE, "cancel r1", "schedule list", "logs r1")


async def run_cli(address: str, *args: str) -> tuple[int, str, str]:
    environ = {**os.environ, "TEMPORAL_ADDRESS": address, "NPAFLOW_TASK_QUEUE": "tq-user-mistakes"}
    process = await asyncio.create_subprocess_exec(
        NPAFLOW, *args, cwd=ROOT, env=environ, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 90)
    return process.returncode or 0, out.decode(), err.decode()


def assert_one_clear_line(code: int, out: str, err: str) -> None:
    assert code == 2, (code, out, err)
    assert "Traceback" not in err + out, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert 1 <= len(lines) <= 2, err
    assert lines[-1].startswith(("npaflow: error:", GATE, "specs/")), err


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
async def test_a_command_line_mistake_is_one_clear_line_and_exit_two(
    env: WorkflowEnvironment, mistake: str
) -> None:
    address = env.client.service_client.config.target_host
    assert_one_clear_line(*(await run_cli(address, *MISTAKES[mistake])))


@pytest.mark.parametrize("command", DEAD_SERVER)
async def test_a_dead_server_is_one_clear_line_and_exit_two_for_every_command(command: str) -> None:
    code, out, err = await run_cli(f"127.0.0.1:{free_port()}", *command.split())
    assert_one_clear_line(code, out, err)
    assert "cannot reach the Temporal server" in err and "from TEMPORAL_ADDRESS" in err


async def test_logs_of_a_run_no_worker_serves_says_so_at_once_instead_of_waiting_on_a_query(
    env: WorkflowEnvironment, harness: Harness
) -> None:
    handle = await harness.start("runtime/local-steps.yaml", run_id=f"unserved-logs-{harness.task_queue}")
    try:
        code, out, err = await run_cli(env.client.service_client.config.target_host, "logs", handle.id)
    finally:
        await handle.terminate("test over")
    assert_one_clear_line(code, out, err)
    assert f"no worker polls task queue '{harness.task_queue}'" in err
