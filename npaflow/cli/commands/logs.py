"""`npaflow logs RUN_ID`: the logs of a run's jobs, read on the worker that holds them."""

from __future__ import annotations

import argparse
import asyncio

from npaflow.cli.options import add_run_id_arguments, count


def add(logs: argparse.ArgumentParser) -> None:
    """The arguments of `logs`."""
    add_run_id_arguments(logs)
    logs.add_argument(
        "--state", default="", help="only this state's jobs, or one fan-out member's (its item: shard-003)"
    )
    logs.add_argument("--tail", type=count, default=2000, help="lines per job (default 2000)")
    logs.add_argument(
        "--raw",
        action="store_true",
        help="print the logs exactly as the jobs wrote them; by default colours stay and any other "
        "escape sequence (a title change, a cleared screen) is shown as text, not obeyed",
    )
    logs.set_defaults(handler=run_logs)


def run_logs(args: argparse.Namespace) -> int:
    """The handler: the Temporal client is imported only now."""
    from npaflow.cli.logs_handler import logs
    from npaflow.options.runs import LogsOptions

    return asyncio.run(logs(LogsOptions.parsed(args)))
