"""The `npaflow` console script: the CLI of `npaflow.cli` plus `worker` and `dev`.

Imports stay light here: the spec commands never load the worker, the
activities, Temporal or aioboto3; `worker` and `dev` import them when they run.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence

from npaflow import cli
from npaflow.cli.options import SubParsers, add_connection_arguments, check_port, count


def percent(text: str) -> float:
    """An argparse type for a ramp: a finite percentage above 0, at most 100."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= 100:  # NaN fails every comparison
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage in (0, 100]")
    return value


def register(commands: SubParsers) -> None:
    """Add `worker`, `dev`, `replay-check` and `deployment`."""
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
    work.add_argument(
        "--metrics-address",
        metavar="HOST:PORT",
        help="serve Prometheus metrics at http://HOST:PORT/metrics (NPAFLOW_METRICS_ADDRESS; off unless set)",
    )
    work.set_defaults(handler=run_worker)
    _add_dev(commands)
    _add_rollout(commands)


def _add_dev(commands: SubParsers) -> None:
    dev = commands.add_parser("dev", help="local Temporal dev server + UI + a local-backend worker")
    dev.add_argument("--port", type=int, default=7233, help="the Temporal server's gRPC port on 127.0.0.1")
    dev.add_argument("--ui-port", type=int, default=8233, help="the Temporal UI's port on 127.0.0.1")
    dev.add_argument(
        "--metrics-address",
        metavar="HOST:PORT",
        help="the worker's Prometheus metrics (NPAFLOW_METRICS_ADDRESS)",
    )
    dev.set_defaults(handler=run_dev)


def _add_rollout(commands: SubParsers) -> None:
    replay_check = commands.add_parser(
        "replay-check",
        help="replay recorded histories against this code (exit 1 on nondeterminism)",
        description="Replay the newest run histories from the server (and/or exported JSON "
        "histories) with this code's workflows; any failure is a run this build could not continue.",
    )
    add_connection_arguments(replay_check, ledger_root=False)
    replay_check.add_argument("--query", default="", help="visibility query (default: every npaflow run)")
    replay_check.add_argument("--limit", type=count, default=100, help="newest N histories (default 100)")
    replay_check.add_argument("--histories", metavar="DIR", help="also replay the JSON histories in DIR")
    replay_check.set_defaults(handler=run_replay_check)

    deployment = commands.add_parser("deployment", help="Worker Deployment versions: promote, status")
    actions = deployment.add_subparsers(dest="action", required=True)
    promote = actions.add_parser(
        "promote",
        help="replay-check recent runs on this code, then route new runs to BUILD_ID",
        description="Run with the new build's code. Refuses (exit 2) when a recent history does "
        "not replay; open runs stay on the build that started them.",
    )
    add_connection_arguments(promote, ledger_root=False)
    promote.add_argument("build_id", metavar="BUILD_ID", help="the build id the new workers run as")
    promote.add_argument("--ramp", type=percent, metavar="PERCENT", help="send only PERCENT of new runs")
    promote.add_argument("--limit", type=count, default=100, help="histories to replay first (default 100)")
    promote.set_defaults(handler=run_promote)
    status = actions.add_parser("status", help="versions, their open runs, and whether their workers poll")
    add_connection_arguments(status, ledger_root=False)
    status.add_argument("--json", action="store_true", help="print machine-readable JSON")
    status.set_defaults(handler=run_deployment_status)


def run_worker(args: argparse.Namespace) -> int:
    """`worker` (or its `--health-check`): the worker's modules load only now."""
    from worker.commands import check_worker
    from worker.commands import run_worker as serve

    return check_worker(args) if args.health_check else serve(args)


def run_dev(args: argparse.Namespace) -> int:
    """`dev`: the dev server, the UI and a worker."""
    from worker.commands import run_dev as serve_dev

    check_port("--port", args.port)
    check_port("--ui-port", args.ui_port)
    return serve_dev(args)


def run_replay_check(args: argparse.Namespace) -> int:
    """`replay-check`."""
    from worker.rollout_commands import run_replay_check as replay

    return replay(args)


def run_promote(args: argparse.Namespace) -> int:
    """`deployment promote`."""
    from worker.rollout_commands import run_promote as promote

    return promote(args)


def run_deployment_status(args: argparse.Namespace) -> int:
    """`deployment status`."""
    from worker.rollout_commands import run_deployment_status as deployment_status

    return deployment_status(args)


def main(argv: Sequence[str] | None = None) -> None:
    """Console script entry point."""
    cli.main(argv, extra=[register])


if __name__ == "__main__":
    main()
