"""`npaflow worker --health-check`: the container healthcheck asks Temporal whether this worker polls."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.harness import start_worker_process
from tests.helpers import NPAFLOW, ROOT, eventually

pytestmark = pytest.mark.e2e


def health_check(env: WorkflowEnvironment, home: Path, task_queue: str) -> subprocess.CompletedProcess:
    environ = {
        **os.environ,
        "TEMPORAL_ADDRESS": env.client.service_client.config.target_host,
        "NPAFLOW_TASK_QUEUE": task_queue,
        "NPAFLOW_HOME": str(home),
    }
    return subprocess.run(
        [NPAFLOW, "worker", "--health-check"],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_a_serving_worker_is_healthy_and_a_stopped_or_never_started_one_is_not(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    queue = f"health-{uuid.uuid4().hex[:6]}"
    worker = start_worker_process(env, tmp_path / "serving", queue)
    try:

        async def healthy() -> bool:
            return health_check(env, tmp_path / "serving", queue).returncode == 0

        await eventually(healthy, timeout=60, interval=0.5, what="the worker reported healthy")
        (tmp_path / "stopped-host").mkdir()
        (tmp_path / "stopped-host" / "worker-id").write_text("stopped-host-1\n")
        stopped = health_check(env, tmp_path / "stopped-host", queue)
        never = health_check(env, tmp_path / "fresh-host", queue)
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    assert stopped.returncode == 1  # its own queue: no worker with its id polls it
    assert f"nobody polls task queue {queue}@stopped-host-1" in stopped.stderr
    assert never.returncode == 1 and "no worker has started" in never.stderr
    assert not (tmp_path / "fresh-host" / "worker-id").exists()  # the check invents no id
