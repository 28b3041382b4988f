"""`npaflow artifacts RUN_ID`: a run's declared outputs (present or missing now), decisions, triggers."""

from __future__ import annotations

import argparse
import asyncio

from npaflow.cli.options import add_run_id_arguments


def add(found: argparse.ArgumentParser) -> None:
    """The arguments of `artifacts`."""
    add_run_id_arguments(found)
    found.add_argument("--state", default="", help="only this state's artifacts")
    found.add_argument("--json", action="store_true", help="print machine-readable JSON")
    found.set_defaults(handler=run_artifacts)


def run_artifacts(args: argparse.Namespace) -> int:
    """The handler: the Temporal client is imported only now."""
    from npaflow.cli.artifacts_handler import artifacts
    from npaflow.options.runs import ArtifactsOptions

    return asyncio.run(artifacts(ArtifactsOptions.parsed(args)))
