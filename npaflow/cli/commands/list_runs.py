"""`npaflow list`: npaflow's runs, newest first, with spec, phase and GPU-hours."""

from __future__ import annotations

import argparse
import asyncio

from npaflow.cli.options import add_connection_arguments, nonempty


def add(runs: argparse.ArgumentParser) -> None:
    """The arguments of `list`."""
    add_connection_arguments(runs, ledger_root=False)
    runs.add_argument("--phase", default="", help="only runs in this phase (running, suspended, failed, ...)")
    runs.add_argument("--spec", type=nonempty, help="only runs of this spec (its metadata.name)")
    runs.add_argument(
        "--since", default="", metavar="DURATION", help="only runs started in the last 30m, 24h, 7d"
    )
    runs.add_argument("--limit", type=int, default=50, help="at most this many runs")
    runs.add_argument("--json", action="store_true", help="print machine-readable JSON")
    runs.set_defaults(handler=run_list)


def run_list(args: argparse.Namespace) -> int:
    """The handler: the Temporal client is imported only now."""
    from npaflow.cli.list_handler import list_runs
    from npaflow.options.runs import ListOptions

    return asyncio.run(list_runs(ListOptions.parsed(args)))
