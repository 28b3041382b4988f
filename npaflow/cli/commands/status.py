"""`npaflow status RUN_ID`: a run's live status, from its query or, with no worker up, the server."""

from __future__ import annotations

import argparse
import asyncio

from npaflow.cli.options import add_run_id_arguments


def add(status: argparse.ArgumentParser) -> None:
    """The arguments of `status`."""
    add_run_id_arguments(status)
    status.add_argument("--json", action="store_true", help="print machine-readable JSON")
    status.add_argument(
        "--watch",
        action="store_true",
        help="follow until the run ends (Ctrl-C stops following: exit 4, the run continues)",
    )
    status.add_argument(
        "--write-report",
        action="store_true",
        help="also write the run's report page (graph, timeline, decisions) beside its ledger",
    )
    status.set_defaults(handler=run_status)


def run_status(args: argparse.Namespace) -> int:
    """The handler: the Temporal client is imported only now."""
    from npaflow.cli.run_handlers import status
    from npaflow.options.runs import StatusOptions

    return asyncio.run(status(StatusOptions.parsed(args)))
