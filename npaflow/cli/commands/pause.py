"""`npaflow pause RUN_ID`: in-flight waves finish, no new one launches until `resume`."""

from __future__ import annotations

import argparse
import asyncio

from npaflow.cli.options import add_run_id_arguments


def add(pause: argparse.ArgumentParser) -> None:
    """The arguments of `pause`."""
    add_run_id_arguments(pause)
    pause.set_defaults(handler=run_pause)


def run_pause(args: argparse.Namespace) -> int:
    """The handler: the Temporal client is imported only now."""
    from npaflow.cli.run_handlers import pause
    from npaflow.options.runs import RunOptions

    return asyncio.run(pause(RunOptions.parsed(args)))
