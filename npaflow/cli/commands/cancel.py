"""`npaflow cancel RUN_ID`: cancel a run's jobs by exact id and end it."""

from __future__ import annotations

import argparse
import asyncio

from npaflow.cli.options import add_run_id_arguments


def add(cancel: argparse.ArgumentParser) -> None:
    """The arguments of `cancel`."""
    add_run_id_arguments(cancel)
    cancel.add_argument("--reason", default="", help="recorded in the ledger")
    cancel.set_defaults(handler=run_cancel)


def run_cancel(args: argparse.Namespace) -> int:
    """The handler: the Temporal client is imported only now."""
    from npaflow.cli.run_handlers import cancel
    from npaflow.options.runs import CancelOptions

    return asyncio.run(cancel(CancelOptions.parsed(args)))
