"""`npaflow worker`: serve a worker (config from flags or environment), or check one is healthy."""

from __future__ import annotations

import argparse

from npaflow.cli.lazy_commands import worker_command
from npaflow.cli.options import add_connection_arguments


def add(work: argparse.ArgumentParser) -> None:
    """The arguments of `worker`."""
    add_connection_arguments(work)
    work.add_argument("--backend", help="backends to offer, comma-separated (NPAFLOW_BACKEND)")
    work.add_argument(
        "--job-env",
        action="append",
        default=[],
        metavar="NAME",
        help="pass this worker variable through to local jobs (NPAFLOW_JOB_ENV)",
    )
    work.add_argument(
        "--health-check",
        action="store_true",
        help="exit 0 when this host's worker polls all its task queues, else 1 (the container healthcheck)",
    )
    work.add_argument(
        "--metrics-address",
        metavar="HOST:PORT",
        help="serve Prometheus metrics at http://HOST:PORT/metrics (NPAFLOW_METRICS_ADDRESS; off unless set)",
    )
    work.set_defaults(handler=run_worker)


def run_worker(args: argparse.Namespace) -> int:
    """The handler: the worker's modules load only now."""
    from npaflow.options import WorkerOptions

    options = WorkerOptions.parsed(args)
    function = "check_worker" if options.health_check else "run_worker"
    return worker_command("worker.commands", function)(options)
