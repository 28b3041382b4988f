"""`npaflow schedule backfill`: the runs a schedule would have started, counted before any starts.

A backfill starts every run its window matches, at once under `allow-all`: ten
years of a one-minute schedule is five million GPU runs. The server's own list
of matching times counts them first (it answers at most 1,000 times a call, so
longer windows are counted page by page, no further than the limit), and a
backfill past `--max-runs` is refused with the count.
"""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta

from google.protobuf.timestamp_pb2 import Timestamp
from temporalio.api.workflowservice.v1 import ListScheduleMatchingTimesRequest
from temporalio.client import Client, ScheduleBackfill

from npaflow.cli.schedule.handler import handle_of
from npaflow.cli.schedule.view import OVERLAP
from npaflow.errors import UsageError

#: The most matching times the server lists in one answer.
SERVER_PAGE = 1000


async def backfill(args: argparse.Namespace) -> int:
    """Run what the schedule would have started between two times, if that is at most --max-runs."""
    start, end = _time("--start", args.start), _time("--end", args.end)
    if end <= start:
        raise UsageError("--end must be after --start")
    client, handle, _ = await handle_of(args)
    runs = await count_runs(client, args.name, start, end, args.max_runs)
    if runs > args.max_runs:
        raise UsageError(
            f"schedule {args.name}: a backfill from {args.start} to {args.end} would start more than "
            f"{args.max_runs:,} runs ({runs:,} counted so far, overlap {args.overlap}); narrow "
            "--start/--end, or raise --max-runs to the number you mean to start"
        )
    if not runs:
        print(f"schedule {args.name}: no scheduled time between {args.start} and {args.end}; nothing to run")
        return 0
    await handle.backfill(ScheduleBackfill(start_at=start, end_at=end, overlap=OVERLAP[args.overlap]))
    print(f"schedule {args.name}: backfill of {runs:,} runs from {args.start} to {args.end} requested")
    return 0


async def count_runs(client: Client, schedule_id: str, start: datetime, end: datetime, limit: int) -> int:
    """The schedule's times in [start, end], as the server computes them; counting stops past `limit`."""
    counted, since = 0, start
    while True:
        request = ListScheduleMatchingTimesRequest(
            namespace=client.namespace,
            schedule_id=schedule_id,
            start_time=_timestamp(since),
            end_time=_timestamp(end),
        )
        times = (await client.workflow_service.list_schedule_matching_times(request)).start_time
        counted += len(times)
        if len(times) < SERVER_PAGE or counted > limit:
            return counted
        since = times[-1].ToDatetime(tzinfo=start.tzinfo) + timedelta(microseconds=1)


def _timestamp(moment: datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(moment)
    return stamp


def _time(flag: str, text: str) -> datetime:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"{flag} {text!r}: expected an ISO time, e.g. 2026-12-01T00:00:00Z") from None
