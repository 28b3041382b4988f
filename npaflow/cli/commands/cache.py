"""`npaflow cache list | explain | purge`: the stage cache's entries, why a state missed, and clean-up."""

from __future__ import annotations

import argparse
import asyncio

from npaflow.cli.options import add_connection_arguments, add_run_id_arguments, storage_root


def add(cache: argparse.ArgumentParser) -> None:
    """The arguments of `cache` and its actions."""
    actions = cache.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="cache entries, newest first (state, key, source run, GPU-h)")
    _add_where(listing)
    listing.add_argument("--scope", default="", help="only this scope (default: every scope)")
    listing.add_argument("--json", action="store_true", help="print machine-readable JSON")
    listing.set_defaults(handler=run_cache)
    explain = actions.add_parser(
        "explain",
        help="a run's state: its key's components and, for a miss, what differs from the newest entry",
    )
    add_run_id_arguments(explain)
    explain.add_argument("--state", required=True, help="the state to explain")
    explain.add_argument("--json", action="store_true", help="print machine-readable JSON")
    explain.set_defaults(handler=run_cache)
    purge = actions.add_parser(
        "purge", help="delete entries: of a scope, older than a duration, one key, or what a run wrote"
    )
    _add_where(purge)
    purge.add_argument("--scope", default="", help="delete this scope's entries")
    purge.add_argument(
        "--older-than", default="", metavar="DURATION", help="delete entries older than, e.g. 30d"
    )
    purge.add_argument(
        "--key",
        default="",
        metavar="KEY",
        help="delete one entry: its key as `cache list` prints it (sha256:<hex>), its hex, or a unique "
        "prefix of 12 or more hex digits",
    )
    purge.add_argument("--run", default="", metavar="RUN_ID", help="delete the entries this run wrote")
    purge.add_argument("--state", default="", help="with --run: only that state's entries")
    purge.add_argument("--dry-run", action="store_true", help="list what would be deleted, delete nothing")
    purge.set_defaults(handler=run_cache)


def _add_where(parser: argparse.ArgumentParser) -> None:
    add_connection_arguments(parser, ledger_root=False)
    parser.add_argument(
        "--root",
        type=storage_root,
        metavar="URI",
        help="the cache root (default: the workers' ledger root's .npaflow-cache; for specs with "
        "config.bucket: s3://BUCKET/.npaflow-cache)",
    )


def run_cache(args: argparse.Namespace) -> int:
    """The handler: the Temporal client is imported only now."""
    from npaflow.cli.cache.handler import cache
    from npaflow.options.features import CacheOptions

    return asyncio.run(cache(CacheOptions.parsed(args)))
