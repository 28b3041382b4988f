"""`npaflow report RUN_ID --out FILE`: the run as one self-contained page (graph, timeline, decisions)."""

from __future__ import annotations

import argparse
import asyncio

from npaflow.cli.options import add_run_id_arguments, nonempty


def add(report: argparse.ArgumentParser) -> None:
    """The arguments of `report`."""
    add_run_id_arguments(report)
    report.add_argument(
        "--out",
        type=nonempty,
        default=argparse.SUPPRESS,
        help="where to write the page (default: RUN_ID.html here; '-' prints it)",
    )
    report.set_defaults(handler=run_report)


def run_report(args: argparse.Namespace) -> int:
    """The handler: the Temporal client is imported only now."""
    from npaflow.cli.report_handler import report
    from npaflow.options.runs import ReportOptions

    return asyncio.run(report(ReportOptions.parsed(args)))
