"""`npaflow schedule backfill`: the runs a schedule would have started, counted before any starts.

A backfill starts every run its window matches, at once under `allow-all`: ten
years of a one-minute schedule is five million GPU runs. The server's own list
of matching times counts them first (it answers at most 1,000 times a call, so
longer windows are counted page by page, no further than the limit), and a
backfill past `--max-runs` is refused with the count.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from google.protobuf.timestamp_pb2 import Timestamp
from temporalio.api.workflowservice.v1 import ListScheduleMatchingTimesRequest
from temporalio.client import Client, ScheduleBackfill

from npaflow.cli.options import Overlap
from npaflow.cli.schedule.handler import handle_of
from npaflow.cli.schedule.view import OVERLAP
from npaflow.errors import UsageError
from npaflow.options.launch import BackfillOptions

#: The most matching times the server lists in one answer.
SERVER_PAGE = 1000


async def backfill(options: BackfillOptions) -> int:
    """Run what the schedule would have started between two times, if that is at most --max-runs."""
    start, end = _time("--start", options.start), _time("--end", options.end)
    if end <= start:
        raise UsageError("--end must be after --start")
    client, handle, _ = await handle_of(options)
    runs = await count_runs(client, options.name, start, end, options.max_runs)
    if runs > options.max_runs:
        raise UsageError(
            f"schedule {options.name}: a backfill from {options.start} to {options.end} would start "
            f"more than {options.max_runs:,} runs ({runs:,} counted so far, overlap {options.overlap}); "
            "narrow --start/--end, or raise --max-runs to the number you mean to start"
        )
    if not runs:
        print(
            f"schedule {options.name}: no scheduled time between {options.start} and {options.end}; "
            "nothing to run"
        )
        return 0
    await handle.backfill(
        ScheduleBackfill(start_at=start, end_at=end, overlap=OVERLAP[Overlap(options.overlap)])
    )
    print(
        f"schedule {options.name}: backfill of {runs:,} runs from {options.start} to {options.end} requested"
    )
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
