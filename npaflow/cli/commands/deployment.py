"""`npaflow deployment promote|status`: Worker Deployment versions."""

from __future__ import annotations

import argparse
import math

from npaflow.cli.lazy_commands import worker_command
from npaflow.cli.options import add_connection_arguments, count


def percent(text: str) -> float:
    """An argparse type for a ramp: a finite percentage above 0, at most 100."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= 100:  # NaN fails every comparison
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage in (0, 100]")
    return value


def add(deployment: argparse.ArgumentParser) -> None:
    """The actions of `deployment`: `promote` and `status`."""
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


def run_promote(args: argparse.Namespace) -> int:
    """`deployment promote`: the worker's rollout code loads only now."""
    from npaflow.options import PromoteOptions

    return worker_command("worker.rollout_commands", "run_promote")(PromoteOptions.parsed(args))


def run_deployment_status(args: argparse.Namespace) -> int:
    """`deployment status`."""
    from npaflow.options import DeploymentStatusOptions

    options = DeploymentStatusOptions.parsed(args)
    return worker_command("worker.rollout_commands", "run_deployment_status")(options)
