"""`npaflow replay-check`: replay recorded histories against this code (exit 1 on nondeterminism)."""

from __future__ import annotations

import argparse

from npaflow.cli.lazy_commands import worker_command
from npaflow.cli.options import add_connection_arguments, count, nonempty


def add(replay_check: argparse.ArgumentParser) -> None:
    """The arguments of `replay-check`."""
    replay_check.description = (
        "Replay the newest run histories from the server (and/or exported JSON histories) with "
        "this code's workflows; any failure is a run this build could not continue."
    )
    add_connection_arguments(replay_check, ledger_root=False)
    replay_check.add_argument("--query", default="", help="visibility query (default: every npaflow run)")
    replay_check.add_argument("--limit", type=count, default=100, help="newest N histories (default 100)")
    replay_check.add_argument(
        "--histories", type=nonempty, metavar="DIR", help="also replay the JSON histories in DIR"
    )
    replay_check.set_defaults(handler=run_replay_check)


def run_replay_check(args: argparse.Namespace) -> int:
    """The handler: the worker's replayer loads only now."""
    from npaflow.options import ReplayCheckOptions

    return worker_command("worker.rollout_commands", "run_replay_check")(ReplayCheckOptions.parsed(args))
