"""No silent waits: an unreachable server, a run no worker serves, and Ctrl-C while following.

Each command runs as the user runs it: the console script, as a process; Ctrl-C
is typed into a pseudo-terminal, so the terminal (not the test) sends SIGINT.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import pty
import signal
import subprocess
import termios
import threading
import time
import uuid
from pathlib import Path

import pytest
from temporalio.client import WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

from tests.e2e.test_cli_runs import npaflow, npaflow_process
from tests.harness import Harness
from tests.helpers import NPAFLOW, ROOT, eventually, in_the_foreground
from tests.skypilot_server import free_port

pytestmark = pytest.mark.e2e

SPEC = (
    "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: idle}\n"
    "states:\n  only: {terminal: true, run: {shell: 'true'}}\n"
)


def spec_file(tmp_path: Path) -> str:
    path = tmp_path / "idle.yaml"
    path.write_text(SPEC)
    return str(path)


def test_an_unreachable_server_is_reported_at_once_with_the_address_and_the_fix(tmp_path: Path) -> None:
    address = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    result = subprocess.run(
        [NPAFLOW, "status", "some-run", "--address", address],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "NPAFLOW_HOME": str(tmp_path)},
        check=False,
    )
    took = time.monotonic() - started
    assert result.returncode == 2
    assert f"cannot reach the Temporal server at {address}" in result.stderr
    assert "connection refused" in result.stderr and "npaflow dev" in result.stderr
    assert "Traceback" not in result.stderr
    assert took < 10, f"took {took:.1f}s (a connect retried for 20 s took 21 s)"


def test_a_command_waits_for_a_dev_server_that_npaflow_dev_is_starting(tmp_path: Path) -> None:
    port = free_port()
    marker = tmp_path / f"dev-server-starting-{port}"
    marker.write_text(str(os.getpid()))  # this process plays `npaflow dev`, starting nothing
    environ = {**os.environ, "NPAFLOW_HOME": str(tmp_path)}
    command = [NPAFLOW, "status", "some-run", "--address", f"127.0.0.1:{port}"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=environ)
    watchdog = threading.Timer(120, process.kill)  # a command that never says it: the test fails, not hangs
    watchdog.start()
    try:
        assert process.stderr is not None
        said = process.stderr.readline()  # said once the usual patience is spent
        assert "waiting for 'npaflow dev' to start the server" in said
        assert process.poll() is None  # and it goes on waiting
    finally:
        watchdog.cancel()
        marker.unlink()
        process.kill()
        process.communicate()


async def test_status_of_a_run_no_worker_serves_says_so(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    run_id = f"idle-{uuid.uuid4().hex[:6]}"
    started = await npaflow(env, local_harness, "submit", spec_file(tmp_path), "--run-id", run_id)
    assert started.returncode == 0
    assert "no worker polls task queue" in started.stderr
    try:
        status = await npaflow(env, local_harness, "status", run_id)
        assert status.returncode == 0
        assert f"waiting: no worker polls task queue '{local_harness.task_queue}'" in status.stdout
    finally:
        await env.client.get_workflow_handle(run_id).terminate("test over")


async def test_ctrl_c_on_status_watch_stops_following_and_the_run_continues(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    run_id = f"idle-{uuid.uuid4().hex[:6]}"
    assert (
        await npaflow(env, local_harness, "submit", spec_file(tmp_path), "--run-id", run_id)
    ).returncode == 0
    try:
        process = await npaflow_process(
            env, local_harness, "status", run_id, "--watch", preexec_fn=in_the_foreground
        )
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), 30)
        assert b"no worker polls task queue" in line  # said within one poll, in a pipe
        process.send_signal(signal.SIGINT)
        _, err = await asyncio.wait_for(process.communicate(), 30)
        assert process.returncode == 4
        assert f"stopped following run {run_id}; the run continues" in err.decode()
        description = await env.client.get_workflow_handle(run_id).describe()
        assert description.status == WorkflowExecutionStatus.RUNNING
    finally:
        await env.client.get_workflow_handle(run_id).terminate("test over")


def typed_into_a_terminal() -> None:
    """In the child: the pty (its stdin) becomes its controlling terminal, Ctrl-C not ignored."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    in_the_foreground()


async def test_ctrl_c_in_a_terminal_on_submit_wait_says_the_run_continues_and_how_to_cancel_it(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    run_id = f"idle-{uuid.uuid4().hex[:6]}"
    primary, secondary = pty.openpty()
    environ = {
        **os.environ,
        "TEMPORAL_ADDRESS": env.client.service_client.config.target_host,
        "NPAFLOW_TASK_QUEUE": local_harness.task_queue,
        "NPAFLOW_HOME": str(local_harness.home),
    }
    process = subprocess.Popen(
        [NPAFLOW, "submit", spec_file(tmp_path), "--run-id", run_id, "--wait"],
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        cwd=ROOT,
        env=environ,
        start_new_session=True,
        preexec_fn=typed_into_a_terminal,
    )
    os.close(secondary)
    screen = bytearray()

    def read_until(text: bytes) -> bool:
        while True:
            try:
                chunk = os.read(primary, 65536)
            except (BlockingIOError, OSError):
                return text in screen
            if not chunk:
                return text in screen
            screen.extend(chunk)
            if text in screen:
                return True

    os.set_blocking(primary, False)
    try:
        await eventually(lambda: read_until(b"no worker polls task queue"), timeout=30, interval=0.1)
        os.write(primary, b"\x03")  # Ctrl-C, typed
        await eventually(lambda: process.poll() is not None, timeout=30, interval=0.1)
        read_until(b"npaflow cancel")
        text = " ".join(screen.decode(errors="replace").split())
        assert process.returncode == 4, text
        assert f"stopped following run {run_id}; the run continues" in text
        assert f"npaflow status {run_id} --watch" in text and f"npaflow cancel {run_id}" in text
        assert "Traceback" not in text
        description = await env.client.get_workflow_handle(run_id).describe()
        assert description.status == WorkflowExecutionStatus.RUNNING
    finally:
        os.close(primary)
        if process.poll() is None:
            process.kill()
        await env.client.get_workflow_handle(run_id).terminate("test over")
