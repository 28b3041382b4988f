"""`npaflow resume RUN_ID`: continue a paused or suspended run, or restart an ended one."""

from __future__ import annotations

import argparse
import asyncio

from npaflow.cli.image_flags import add_preflight_argument
from npaflow.cli.options import add_run_id_arguments


def add(resume: argparse.ArgumentParser) -> None:
    """The arguments of `resume`."""
    add_run_id_arguments(resume)
    resume.add_argument(
        "--spec", metavar="NEW.yaml", help="restart an ended run onto this edited spec (its change is listed)"
    )
    resume.add_argument(
        "--accept-changes",
        action="store_true",
        help="with --spec: re-run the changed steps that have not completed",
    )
    resume.add_argument("--json", action="store_true", help="print the change as JSON")
    resume.add_argument(
        "--wait",
        action="store_true",
        help="follow the run and print its summary, as submit --wait does; the exit code is its outcome",
    )
    add_preflight_argument(resume)
    resume.add_argument(
        "--max-gpu-hours",
        type=float,
        default=None,
        metavar="H",
        help="restart with this GPU-hour budget (a run that spent its budget continues)",
    )
    resume.add_argument(
        "--reread-items",
        action="store_true",
        help="restart with every forEach group reading its list's source again, not the run's copy "
        "(members already done stay done; the ledger notes the items added and removed)",
    )
    resume.set_defaults(handler=run_resume)


def run_resume(args: argparse.Namespace) -> int:
    """The handler: the Temporal client is imported only now."""
    from npaflow.cli.resume_handler import resume
    from npaflow.options.runs import ResumeOptions

    return asyncio.run(resume(ResumeOptions.parsed(args)))
