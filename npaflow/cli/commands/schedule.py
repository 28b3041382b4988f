"""`npaflow schedule create|list|describe|pause|unpause|trigger|backfill|delete` (Temporal Schedules)."""

from __future__ import annotations

import argparse
import asyncio

from npaflow.cli.commands.submit import add_run_options
from npaflow.cli.options import (
    Overlap,
    SubParsers,
    add_connection_arguments,
    add_spec_arguments,
    count,
    nonempty,
)

#: The most runs `schedule backfill` starts unless --max-runs says more (each may hold GPUs).
DEFAULT_MAX_BACKFILL_RUNS = 100


def add(schedule: argparse.ArgumentParser) -> None:
    """The arguments of `schedule` and its actions."""
    actions = schedule.add_subparsers(dest="action", metavar="ACTION", required=True)
    _add_create(actions)
    for name, text, handler in (
        ("describe", "what a schedule does, its next and recent runs, and what it skipped", run_describe),
        ("pause", "stop starting runs (started runs go on)", run_pause),
        ("unpause", "start runs again at the next scheduled time", run_unpause),
        ("trigger", "start one run now (the overlap policy applies)", run_trigger),
        ("backfill", "run what the schedule would have started between two times", run_backfill),
        ("delete", "delete a schedule (its runs and their ledgers stay)", run_delete),
    ):
        action = actions.add_parser(name, help=text)
        action.add_argument("name", metavar="NAME", type=nonempty, help="the schedule's name")
        add_connection_arguments(action, ledger_root=False)
        if name == "describe":
            action.add_argument("--json", action="store_true", help="print machine-readable JSON")
        if name in ("pause", "unpause"):
            action.add_argument("--note", default="", help="why (shown in the Temporal UI)")
        if name == "backfill":
            _add_backfill_window(action)
        action.set_defaults(handler=handler)
    listing = actions.add_parser("list", help="npaflow's schedules, with when they run next")
    add_connection_arguments(listing, ledger_root=False)
    listing.add_argument("--json", action="store_true", help="print machine-readable JSON")
    listing.set_defaults(handler=run_list)


def _add_create(actions: SubParsers) -> None:
    create = actions.add_parser(
        "create", help="validate a spec and run it on a schedule; runs are NAME-<time>"
    )
    create.add_argument("name", metavar="NAME", help="the schedule's name; it starts every run id it makes")
    add_spec_arguments(create)
    add_connection_arguments(create, ledger_root=False)
    create.add_argument(
        "--cron", default="", metavar="EXPR", help="a cron expression, e.g. '0 3 * * *' (UTC)"
    )
    create.add_argument("--every", default="", metavar="DURATION", help="an interval, e.g. 24h or 30m")
    create.add_argument(
        "--overlap",
        choices=[o.value for o in Overlap],
        default=Overlap.SKIP.value,
        help="when the previous run is still going: skip this one, run it after, or run both",
    )
    create.add_argument(
        "--catchup-window", default="", metavar="DURATION", help="how late a missed run may still start"
    )
    create.add_argument(
        "--jitter", default="", metavar="DURATION", help="start each run up to this much later"
    )
    add_run_options(create)
    create.set_defaults(handler=run_create)


def _add_backfill_window(action: argparse.ArgumentParser) -> None:
    action.add_argument("--start", required=True, metavar="TIME", help="ISO time, e.g. 2026-12-01T00:00:00Z")
    action.add_argument("--end", required=True, metavar="TIME", help="ISO time, after --start")
    action.add_argument(
        "--overlap",
        choices=[o.value for o in Overlap],
        default=Overlap.ALLOW_ALL.value,
        help="for these runs",
    )
    action.add_argument(
        "--max-runs",
        type=count,
        default=DEFAULT_MAX_BACKFILL_RUNS,
        metavar="N",
        help="refuse a backfill that would start more runs than this (counted first)",
    )


def run_create(args: argparse.Namespace) -> int:
    """`schedule create` (the Temporal client is imported only now)."""
    from npaflow.cli.schedule.handler import create
    from npaflow.options.launch import ScheduleCreateOptions

    return asyncio.run(create(ScheduleCreateOptions.parsed(args)))


def run_describe(args: argparse.Namespace) -> int:
    """`schedule describe` (the Temporal client is imported only now)."""
    from npaflow.cli.schedule.handler import describe
    from npaflow.options.launch import ScheduleOptions

    return asyncio.run(describe(ScheduleOptions.parsed(args)))


def run_pause(args: argparse.Namespace) -> int:
    """`schedule pause` (the Temporal client is imported only now)."""
    from npaflow.cli.schedule.handler import pause
    from npaflow.options.launch import ScheduleOptions

    return asyncio.run(pause(ScheduleOptions.parsed(args)))


def run_unpause(args: argparse.Namespace) -> int:
    """`schedule unpause` (the Temporal client is imported only now)."""
    from npaflow.cli.schedule.handler import unpause
    from npaflow.options.launch import ScheduleOptions

    return asyncio.run(unpause(ScheduleOptions.parsed(args)))


def run_trigger(args: argparse.Namespace) -> int:
    """`schedule trigger` (the Temporal client is imported only now)."""
    from npaflow.cli.schedule.handler import trigger
    from npaflow.options.launch import ScheduleOptions

    return asyncio.run(trigger(ScheduleOptions.parsed(args)))


def run_backfill(args: argparse.Namespace) -> int:
    """`schedule backfill` (the Temporal client is imported only now)."""
    from npaflow.cli.schedule.backfill import backfill
    from npaflow.options.launch import BackfillOptions

    return asyncio.run(backfill(BackfillOptions.parsed(args)))


def run_delete(args: argparse.Namespace) -> int:
    """`schedule delete` (the Temporal client is imported only now)."""
    from npaflow.cli.schedule.handler import delete
    from npaflow.options.launch import ScheduleOptions

    return asyncio.run(delete(ScheduleOptions.parsed(args)))


def run_list(args: argparse.Namespace) -> int:
    """`schedule list` (the Temporal client is imported only now)."""
    from npaflow.cli.schedule.handler import list_schedules
    from npaflow.options.launch import ScheduleOptions

    return asyncio.run(list_schedules(ScheduleOptions.parsed(args)))
