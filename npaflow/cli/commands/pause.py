"""`npaflow pause RUN_ID`: in-flight waves finish, no new one launches until `resume`."""

from __future__ import annotations

import argparse
import asyncio

from npaflow.cli.options import SubParsers, add_run_id_arguments


def add(commands: SubParsers) -> None:
    """Register `pause`."""
    pause = commands.add_parser("pause", help="stop launching new waves")
    add_run_id_arguments(pause)
    pause.set_defaults(handler=run_pause)


def run_pause(args: argparse.Namespace) -> int:
    """The handler: the Temporal client is imported only now."""
    from npaflow.cli.run_handlers import pause

    return asyncio.run(pause(args))
