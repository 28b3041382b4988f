"""`npaflow quota set | list | status | delete | release`: GPU quota pools shared by a team's runs."""

from __future__ import annotations

import argparse
import asyncio

from npaflow.cli.options import add_connection_arguments


def add(quota: argparse.ArgumentParser) -> None:
    """The arguments of `quota` and its actions."""
    actions = quota.add_subparsers(dest="action", metavar="ACTION", required=True)
    setting = actions.add_parser("set", help="create a pool, or change its capacity, accelerator or weights")
    setting.add_argument("pool", metavar="POOL", help="the pool's name (lowercase letters, digits, ._-)")
    setting.add_argument("--gpus", type=int, required=True, metavar="N", help="GPUs the pool holds")
    setting.add_argument(
        "--accelerator", default="", metavar="TYPE", help="count only this accelerator type, e.g. H100"
    )
    setting.add_argument(
        "--team",
        action="append",
        default=[],
        metavar="NAME=WEIGHT",
        help="a team's weight in fair share (repeatable; a team not named weighs 1)",
    )
    listing = actions.add_parser("list", help="every pool: capacity, in use, waiting")
    status = actions.add_parser("status", help="a pool's use by team, holders and waiters in order")
    status.add_argument("pool", metavar="POOL", nargs="?", default="", help="the pool (default: every pool)")
    delete = actions.add_parser("delete", help="delete a pool nothing holds or waits for")
    delete.add_argument("pool", metavar="POOL", help="the pool")
    release = actions.add_parser(
        "release", help="free the GPUs of a run that ended without its cleanup (terminated, timed out)"
    )
    release.add_argument("pool", metavar="POOL", help="the pool")
    release.add_argument("run_id", metavar="RUN_ID", help="the run whose leases go")
    release.add_argument(
        "--force", action="store_true", help="release even while the run's ledger says its jobs may still run"
    )
    for parser in (setting, listing, status, delete, release):
        add_connection_arguments(parser, ledger_root=False)
        parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
        parser.set_defaults(handler=run_quota)


def run_quota(args: argparse.Namespace) -> int:
    """The handler: the Temporal client is imported only now."""
    if args.action == "release":
        from npaflow.cli.quota.release import release
        from npaflow.options.features import QuotaOptions

        return asyncio.run(release(QuotaOptions.parsed(args)))
    from npaflow.cli.quota.handler import quota
    from npaflow.options.features import QuotaOptions

    return asyncio.run(quota(QuotaOptions.parsed(args)))
