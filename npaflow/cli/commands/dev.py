"""`npaflow dev`: a local Temporal dev server, its UI and a local-backend worker."""

from __future__ import annotations

import argparse

from npaflow.cli.lazy_commands import worker_command
from npaflow.cli.options import check_port


def add(dev: argparse.ArgumentParser) -> None:
    """The arguments of `dev`."""
    dev.add_argument("--port", type=int, default=7233, help="the Temporal server's gRPC port on 127.0.0.1")
    dev.add_argument("--ui-port", type=int, default=8233, help="the Temporal UI's port on 127.0.0.1")
    dev.add_argument(
        "--metrics-address",
        metavar="HOST:PORT",
        help="the worker's Prometheus metrics (NPAFLOW_METRICS_ADDRESS)",
    )
    dev.set_defaults(handler=run_dev)


def run_dev(args: argparse.Namespace) -> int:
    """The handler: the ports are checked, then the worker's modules load."""
    from npaflow.options import DevOptions

    options = DevOptions.parsed(args)
    check_port("--port", options.port)
    check_port("--ui-port", options.ui_port)
    return worker_command("worker.commands", "run_dev")(options)
