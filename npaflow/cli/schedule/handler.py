"""`npaflow schedule ...`: a spec run on a cron or interval, over Temporal Schedules.

Each scheduled run is an ordinary run (ledger, UI, signals, `status`, `cancel`)
whose id is `<NAME>-<scheduled time>` (the schedule's own naming). The spec is
validated at `create` (exit 2 on an error, nothing created) and travels in the
schedule's action as `submit` would send it. Overlap defaults to skip: a nightly
run never piles up behind a slow one.
"""

from __future__ import annotations

import getpass
import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleAlreadyRunningError,
    ScheduleDescription,
    ScheduleHandle,
    ScheduleIntervalSpec,
    ScheduleListActionStartWorkflow,
    SchedulePolicy,
    ScheduleSpec,
    ScheduleState,
)
from temporalio.service import RPCError, RPCStatusCode

from npaflow.cli.cron import check_cron
from npaflow.cli.durations import parse_duration
from npaflow.cli.images import checked_binding
from npaflow.cli.options import Overlap
from npaflow.cli.quota.check import check_quota
from npaflow.cli.schedule.view import OVERLAP, every_text, schedule_summary, stamp, when_text
from npaflow.cli.spec_loading import load_spec_and_text, require_decision_sources
from npaflow.cli.submit_handler import INLINE_SPEC_LIMIT, build_request
from npaflow.errors import UsageError
from npaflow.ids import RunId
from npaflow.options.launch import ScheduleCreateOptions, ScheduleOptions
from npaflow.printable import printable
from npaflow.runtime.contract import WORKFLOW_TYPE, RunMemo
from npaflow.runtime.locations import shared_prefix
from npaflow.runtime.request import RUN_ID_PATTERN
from npaflow.runtime.ui_text import static_summary
from npaflow.temporal.client import connect_to, task_queue_from
from npaflow.temporal.errors import is_namespace_missing, rpc_error_text

#: A schedule's name starts every run id it makes, before the 21-character time suffix.
MAX_NAME = 70


def _check_name(name: str) -> None:
    if len(name) > MAX_NAME or not RUN_ID_PATTERN.fullmatch(name) or ":" in name:
        raise UsageError(
            f"schedule name {name!r}: letters, digits, '.', '_', '-', starting with a letter or "
            f"digit, at most {MAX_NAME} characters (it starts the id of every run it makes)"
        )


def _spec_of(options: ScheduleCreateOptions) -> ScheduleSpec:
    if bool(options.cron) == bool(options.every):
        raise UsageError("give exactly one of --cron EXPR or --every DURATION (example: --every 24h)")
    jitter = parse_duration("--jitter", options.jitter) if options.jitter else None
    if options.cron:
        check_cron(options.cron)
        return ScheduleSpec(cron_expressions=[options.cron], jitter=jitter)
    every = parse_duration("--every", options.every)
    if jitter is not None and jitter >= every:
        raise UsageError(
            f"--jitter {options.jitter} is not shorter than --every {options.every}: Temporal would cut it "
            "to the interval, so runs would not spread as asked; give a jitter below the interval"
        )
    return ScheduleSpec(intervals=[ScheduleIntervalSpec(every=every)], jitter=jitter)


async def create(options: ScheduleCreateOptions) -> int:
    """Validate the spec (nothing is created on an error), then create the schedule."""
    _check_name(options.name)
    spec, catalog, text = load_spec_and_text(options)
    require_decision_sources(options, spec, catalog)
    if prefix := shared_prefix(spec, catalog):
        raise UsageError(
            f"{options.spec}: config.prefix {prefix!r} is the same for every run of the schedule, and a "
            "prefix holds one run's ledger, so every run after the first would fail; write "
            f"'prefix: {prefix}/{{{{run.id}}}}' (or leave config.prefix unset)"
        )
    schedule_spec = _spec_of(options)
    spec_uri = Path(options.spec).resolve().as_uri() if len(text.encode()) > INLINE_SPEC_LIMIT else ""
    request = build_request(options, text, RunId(""), spec_uri=spec_uri)
    images = await checked_binding(options, spec, catalog, backend=request.backend)
    request = request.model_copy(update={"images": images})
    await check_quota(await connect_to(options), request, spec, catalog)
    catchup = parse_duration("--catchup-window", options.catchup_window) if options.catchup_window else None
    action = ScheduleActionStartWorkflow(
        WORKFLOW_TYPE,
        request,
        id=options.name,
        task_queue=task_queue_from(options.task_queue),
        memo=RunMemo(
            spec=str(options.spec), vars=request.vars, submitted_by=f"schedule {options.name}"
        ).submitted(),
        static_summary=static_summary(spec.name, Path(options.spec).name),
    )
    schedule = Schedule(
        action=action,
        spec=schedule_spec,
        policy=SchedulePolicy(overlap=OVERLAP[Overlap(options.overlap)], catchup_window=catchup),
        state=ScheduleState(note=f"created by {getpass.getuser()} from {options.spec}"),
    )
    when = f"cron {options.cron}" if options.cron else every_text(schedule_spec.intervals[0])
    client = await connect_to(options)
    try:
        handle = await client.create_schedule(
            options.name, schedule, memo={"spec": spec.name, "spec_file": str(options.spec), "when": when}
        )
    except ScheduleAlreadyRunningError:
        raise UsageError(
            f"schedule {options.name!r} already exists (see: npaflow schedule describe {options.name}; "
            f"replace it: npaflow schedule delete {options.name}, then create it again)"
        ) from None
    upcoming = await _refuse_if_it_never_runs(handle, options.cron)
    print(f"schedule {options.name} created: {spec.name}, {when}, overlap {options.overlap}")
    print("next runs: " + ", ".join(stamp(t) for t in upcoming[:3]))
    print(f"its runs are {options.name}-<scheduled time> (see them: npaflow list --spec {spec.name})")
    return 0


async def _refuse_if_it_never_runs(handle: ScheduleHandle, cron: str) -> Sequence[datetime]:
    """The schedule's next times, as the server computes them (shown, so a cron reads as meant).

    A cron no time matches (February 31, a year gone by) makes a schedule that never
    runs; Temporal accepts it, and the server's own list of the next times is the judge.

    Raises:
        UsageError: nothing will ever run (the schedule is deleted again).
    """
    if upcoming := (await handle.describe()).info.next_action_times:
        return upcoming
    await handle.delete()
    raise UsageError(
        f"--cron {cron!r} matches no time to come (a day its month never has, or a past year), "
        "so the schedule would never run; nothing was created"
    )


async def handle_of(
    options: ScheduleOptions, *, changing: bool = True
) -> tuple[Client, ScheduleHandle, ScheduleDescription]:
    """The named schedule; one that starts no npaflow runs is another tool's, and only read."""
    client = await connect_to(options)
    handle = client.get_schedule_handle(options.name)
    try:
        description = await handle.describe()
    except RPCError as exc:
        if is_namespace_missing(exc):
            raise UsageError(rpc_error_text(exc)) from None
        if exc.status is RPCStatusCode.NOT_FOUND:
            raise UsageError(
                f"no schedule named {options.name!r} (list them: npaflow schedule list)"
            ) from None
        raise
    action = description.schedule.action
    if changing and not (
        isinstance(action, ScheduleActionStartWorkflow) and action.workflow == WORKFLOW_TYPE
    ):
        workflow = getattr(action, "workflow", type(action).__name__)
        raise UsageError(
            f"schedule {options.name!r} starts {workflow}, not npaflow runs, so npaflow leaves it alone "
            f"(change it with: temporal schedule ... --schedule-id {options.name})"
        )
    return client, handle, description


async def describe(options: ScheduleOptions) -> int:
    """What the schedule does, its next and recent runs, and what it skipped."""
    _, _, description = await handle_of(options, changing=False)
    summary = await schedule_summary(options.name, description)
    if options.as_json:
        print(json.dumps(summary, indent=2))
        return 0
    for key, value in summary.items():
        shown = ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)
        print(printable(f"{key}: {shown or '-'}"))  # another client may have named what it shows
    return 0


async def list_schedules(options: ScheduleOptions) -> int:
    """Every schedule of the namespace that starts npaflow runs."""
    client = await connect_to(options)
    rows: list[dict[str, Any]] = []
    async for entry in await client.list_schedules():
        listed = entry.schedule
        if listed is None or not isinstance(listed.action, ScheduleListActionStartWorkflow):
            continue
        if listed.action.workflow != WORKFLOW_TYPE:
            continue
        rows.append(
            {
                "name": entry.id,
                "when": when_text(await entry.memo(), listed.spec),
                "paused": listed.state.paused,
                "next_run": stamp(entry.info.next_action_times[0])
                if entry.info and entry.info.next_action_times
                else "",
            }
        )
    if options.as_json:
        print(json.dumps(rows, indent=2))
    elif not rows:
        print("no npaflow schedules (create one: npaflow schedule create NAME SPEC --every 24h)")
    for row in [] if options.as_json else rows:
        state = "paused" if row["paused"] else f"next {row['next_run'] or '-'}"
        print(printable(f"{row['name']}  {'; '.join(row['when'])}  {state}"))
    return 0


async def pause(options: ScheduleOptions) -> int:
    """Stop starting runs (runs already started go on)."""
    _, handle, _ = await handle_of(options)
    await handle.pause(note=options.note or f"paused by {getpass.getuser()}")
    print(f"schedule {options.name} paused")
    return 0


async def unpause(options: ScheduleOptions) -> int:
    """Start runs again at the next scheduled time."""
    _, handle, _ = await handle_of(options)
    await handle.unpause(note=options.note or f"unpaused by {getpass.getuser()}")
    print(f"schedule {options.name} unpaused")
    return 0


async def trigger(options: ScheduleOptions) -> int:
    """Start one run now (the overlap policy still applies)."""
    _, handle, _ = await handle_of(options)
    await handle.trigger()
    print(f"schedule {options.name} triggered")
    return 0


async def delete(options: ScheduleOptions) -> int:
    """Delete the schedule (its runs, and their ledgers, stay)."""
    _, handle, _ = await handle_of(options)
    await handle.delete()
    print(f"schedule {options.name} deleted (its runs and their ledgers stay)")
    return 0
