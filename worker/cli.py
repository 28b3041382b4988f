"""The `npaflow` console script: the CLI of `npaflow.cli` plus `worker` and `dev`.

Imports stay light here: the spec commands never load the worker, the
activities, Temporal or aioboto3; `worker` and `dev` import them when they run.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from npaflow import cli
from npaflow.cli.options import SubParsers
from npaflow.cli.run_commands import add_connection_arguments


def register(commands: SubParsers) -> None:
    """Add `worker` and `dev`."""
    work = commands.add_parser("worker", help="run a worker (config from flags or environment)")
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
    work.set_defaults(handler=lambda a: _run("check_worker" if a.health_check else "run_worker", a))
    dev = commands.add_parser("dev", help="local Temporal dev server + UI + a local-backend worker")
    dev.add_argument("--port", type=int, default=7233)
    dev.add_argument("--ui-port", type=int, default=8233)
    dev.set_defaults(handler=lambda a: _run("run_dev", a))


def _run(name: str, args: argparse.Namespace) -> int:
    from worker import commands

    return int(getattr(commands, name)(args))


def main(argv: Sequence[str] | None = None) -> None:
    """Console script entry point."""
    cli.main(argv, extra=[register])


if __name__ == "__main__":
    main()
