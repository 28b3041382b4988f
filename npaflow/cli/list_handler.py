"""`npaflow list`: npaflow's runs from Temporal visibility, with spec, phase and hours.

Only runs of the run workflow are listed (the helper workflows that `logs` and
ledger repairs start never appear). Phase, spec and current states come from
npaflow's search attributes; GPU-hours from the memo a run writes when it ends,
and for an open run from its status query, counted up to now.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

from temporalio.client import Client, WorkflowExecution, WorkflowExecutionStatus
from temporalio.common import SearchAttributeKey
from temporalio.service import RPCError

from npaflow.cli.durations import parse_duration
from npaflow.cli.live_view import live_view
from npaflow.cli.run_endings import read_reconciled
from npaflow.cli.run_row import RunRow
from npaflow.errors import UsageError
from npaflow.options.runs import ListOptions
from npaflow.printable import printable
from npaflow.runtime.contract import WORKFLOW_TYPE, RunMemo, SearchAttribute
from npaflow.runtime.summary import RunStatusView
from npaflow.runtime.usage import gpu_hours_text
from npaflow.runtime.vocabulary import RunEnding, RunPhase
from npaflow.temporal.client import connect_to
from npaflow.temporal.serving import pinned_version, unserved_runs
from npaflow.waves import counted_states

#: Seconds an open run's status query may take for its spend so far (else the row shows "-").
SPEND_QUERY_SECONDS = 3.0
#: Executions read per run listed: a run resumed more often than this shows a lower count.
MAX_EXECUTIONS_READ = 10
_PHASE = SearchAttributeKey.for_keyword(SearchAttribute.PHASE.value)
_SPEC = SearchAttributeKey.for_keyword(SearchAttribute.WORKFLOW.value)
_STATES = SearchAttributeKey.for_keyword_list(SearchAttribute.STATE.value)


def _quoted(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


#: Endings no run's code records (Temporal's execution status says them): listed, and filtered on.
_ENDED_BEHIND_STATUS = {RunEnding.TERMINATED.value: "Terminated", RunEnding.TIMED_OUT.value: "TimedOut"}
#: Every phase `list --phase` and the page's filter take: the run's own, and those two endings.
LISTED_PHASES = (*(p.value for p in RunPhase), *_ENDED_BEHIND_STATUS)


def visibility_query(phase: str, spec: str, since: str, now: datetime) -> str:
    """The list filter: npaflow runs only, narrowed by phase, spec name and start time."""
    parts = [f"WorkflowType = {_quoted(WORKFLOW_TYPE)}"]
    if phase in _ENDED_BEHIND_STATUS:
        parts.append(f"ExecutionStatus = {_quoted(_ENDED_BEHIND_STATUS[phase])}")
    elif phase:
        parts.append(f"{SearchAttribute.PHASE.value} = {_quoted(phase)}")
        if not RunPhase(phase).is_final():  # a run closed without its code keeps its last phase
            parts.append("ExecutionStatus = 'Running'")
    if spec:
        parts.append(f"{SearchAttribute.WORKFLOW.value} = {_quoted(spec)}")
    if since:
        start = (now - parse_duration("--since", since)).strftime("%Y-%m-%dT%H:%M:%SZ")
        parts.append(f"StartTime > {_quoted(start)}")
    return " AND ".join(parts)


def _duration(seconds: float) -> str:
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else (f"{minutes}m{secs:02d}s" if minutes else f"{secs}s")


#: How a closed execution ended, for a run whose own code never recorded its end (the ledger's words).
_ENDED_WITHOUT_CODE = {
    WorkflowExecutionStatus.TERMINATED: "terminated",
    WorkflowExecutionStatus.TIMED_OUT: "timed_out",
    WorkflowExecutionStatus.FAILED: "failed",
    WorkflowExecutionStatus.CANCELED: "cancelled",
}


def shown_phase(phase: str, status: WorkflowExecutionStatus | None) -> str:
    """The run's phase, or how it ended when it closed without recording its end (as the ledger says)."""
    ended = _ENDED_WITHOUT_CODE.get(status) if status else None
    if ended is None or (phase in {p.value for p in RunPhase} and RunPhase(phase).is_final()):
        return phase
    return ended


async def _row(run: WorkflowExecution, now: datetime) -> RunRow:
    attributes = run.typed_search_attributes
    memo = RunMemo.read(await run.memo())
    end = run.close_time or now
    return RunRow(
        run_id=run.id,
        spec=attributes.get(_SPEC) or "",
        phase=shown_phase(attributes.get(_PHASE) or memo.phase, run.status),
        execution_status=run.status.name if run.status else "UNKNOWN",
        current_states=list(attributes.get(_STATES) or []),
        started_at=run.start_time.strftime("%Y-%m-%dT%H:%M:%SZ"),
        duration_seconds=round((end - run.start_time).total_seconds(), 1),
        gpu_hours=memo.gpu_hours,
        waited_seconds=memo.waited_seconds,
        unverified_cancels=memo.unverified_cancels,
    )


async def run_rows(
    client: Client, query: str, limit: int, now: datetime, *, newest_only: bool = False
) -> list[RunRow]:
    """One row per run id (its newest execution; GPU-hours are the run's total) with its executions.

    An open run no worker can move says why, and is not asked its status (nothing would answer).
    `newest_only` (a phase filter): a run whose newest execution is not the one that matched
    (terminated, then resumed and succeeded) is left out, and the next match takes its place.
    """
    rows, served_by = await _matching_rows(client, query, limit, now, newest_only=newest_only)
    for run_id, reason in (await unserved_runs(client, served_by)).items():
        rows[run_id] = rows[run_id].model_copy(update={"no_worker": reason})
    open_rows = [row for row in rows.values() if row.is_open() and not row.no_worker]
    views = await asyncio.gather(*(_live(client, row.run_id) for row in open_rows))
    for row, view in zip(open_rows, views, strict=True):
        if view is not None:
            rows[row.run_id] = live_row(row, view)
    for row in await _reconciled_rows(client, list(rows.values())):
        rows[row.run_id] = row
    return list(rows.values())


async def _matching_rows(
    client: Client, query: str, limit: int, now: datetime, *, newest_only: bool
) -> tuple[dict[str, RunRow], dict[str, tuple[str, str]]]:
    """The first `limit` runs the query matches, and each open one's task queue and pinned build."""
    rows: dict[str, RunRow] = {}
    matched: dict[str, str] = {}  # run id -> the execution the query matched first (its newest)
    served_by: dict[str, tuple[str, str]] = {}
    checked: set[str] = set()  # runs whose matched execution is known to be their newest
    async for run in client.list_workflows(query, limit=limit * MAX_EXECUTIONS_READ):
        if run.id in rows:
            rows[run.id] = rows[run.id].model_copy(update={"executions": rows[run.id].executions + 1})
            continue
        if run.id in matched:  # an older execution of a run left out
            continue
        if newest_only and len(rows) == limit:  # full: make room for this match if a row is stale
            rows = await _still_newest(client, rows, matched, checked)
            checked.update(rows)
        if len(rows) < limit:
            rows[run.id], matched[run.id] = await _row(run, now), run.run_id
            if rows[run.id].is_open():
                served_by[run.id] = (run.task_queue, pinned_version(run))
    if newest_only:
        rows = await _with_every_execution(client, await _still_newest(client, rows, matched, checked))
    return rows, {run_id: served for run_id, served in served_by.items() if run_id in rows}


async def _with_every_execution(client: Client, rows: dict[str, RunRow]) -> dict[str, RunRow]:
    """Rows a phase filter found, each with all its run's executions (the filter counted those in it)."""

    async def counted(row: RunRow) -> RunRow:
        query = f"WorkflowId = {_quoted(row.run_id)} AND WorkflowType = {_quoted(WORKFLOW_TYPE)}"
        try:
            executions = (await client.count_workflows(query)).count
        except RPCError:
            return row  # the count the filter saw: never more than the run has
        return row.model_copy(update={"executions": max(executions, row.executions)})

    return {row.run_id: row for row in await asyncio.gather(*(counted(row) for row in rows.values()))}


async def _still_newest(
    client: Client, rows: dict[str, RunRow], matched: dict[str, str], checked: set[str]
) -> dict[str, RunRow]:
    """The rows whose matched execution is still their run's newest (unknown: kept as matched)."""

    async def newest(run_id: str) -> str:
        if run_id in checked:
            return matched[run_id]
        try:
            return (await client.get_workflow_handle(run_id).describe()).run_id or matched[run_id]
        except RPCError:
            return matched[run_id]

    newest_ids = await asyncio.gather(*(newest(run_id) for run_id in rows))
    return {
        run_id: row
        for (run_id, row), now in zip(rows.items(), newest_ids, strict=True)
        if now == matched[run_id]
    }


async def _reconciled_rows(client: Client, rows: list[RunRow]) -> list[RunRow]:
    """Runs ended behind their code, with the GPU-hours their ledger counts once the reconciler wrote it.

    Their memo has no total (their code never ended them); the reconcile workflow's answer has.
    So has a run whose end cancelled a job unverified: the job's hours since are the reconciler's.
    """
    behind = [
        row
        for row in rows
        if (row.phase in _ENDED_BEHIND_STATUS and row.gpu_hours is None) or row.unverified_cancels
    ]
    answers = await asyncio.gather(*(read_reconciled(client, row.run_id) for row in behind))
    return [
        row.model_copy(update={"gpu_hours": answer.result.ledger.usage.gpu_hours})
        for row, answer in zip(behind, answers, strict=True)
        if answer.result is not None and answer.result.ledger is not None
    ]


def live_row(row: RunRow, view: RunStatusView) -> RunRow:
    """An open run's row with its spend up to now, its GPU waits, and `waiting` while it waits."""
    update: dict[str, object] = {
        "gpu_hours": view.usage.gpu_hours,
        "waited_seconds": round(sum(wait.seconds for wait in view.quota_waits), 1),
        "current_states": view.current_states or row.current_states,  # fresher than the attribute
    }
    waiting = [wait for wait in view.quota_waits if wait.is_open()]
    if waiting:
        update["phase"] = "waiting"
        update["waiting_for"] = (
            f"quota {waiting[0].pool} ({waiting[0].gpus} GPUs, position {waiting[0].position})"
        )
    elif view.cache_waits:
        update["phase"] = "waiting"
        update["waiting_for"] = view.cache_waits[0].short()
    elif view.stalled:
        update["phase"] = "waiting"
        update["waiting_for"] = view.stalled[0].short
    return row.model_copy(update=update)


async def _live(client: Client, run_id: str) -> RunStatusView | None:
    """An open run's status answer, counted up to now (None when no worker answers soon)."""
    try:
        return await live_view(client.get_workflow_handle(run_id), SPEND_QUERY_SECONDS)
    except Exception:  # noqa: BLE001 - no worker, an old build, a slow one: the row keeps its memo
        return None


def _text(rows: list[RunRow]) -> str:
    header = ("RUN ID", "SPEC", "PHASE", "STATES", "STARTED", "DURATION", "GPU-H", "WAITED", "EXECS")
    table = [header] + [tuple(printable(cell) for cell in _cells(r)) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in table
    )


def _cells(r: RunRow) -> tuple[str, ...]:
    """A row's columns as they read; any client can start a run, so its id is shown escaped."""
    return (
        r.run_id,
        r.spec or "-",
        r.shown_phase(),
        ",".join(counted_states(r.current_states, spaced=False)) or "-" if r.is_open() else "-",
        r.started_at,
        _duration(r.duration_seconds),
        "-" if r.gpu_hours is None else f"{gpu_hours_text(r.gpu_hours)}",
        _duration(r.waited_seconds) if r.waited_seconds else "-",
        str(r.executions),
    )


async def list_runs(options: ListOptions) -> int:
    """Print the newest runs first (at most --limit)."""
    if options.limit < 1:
        raise UsageError(f"--limit {options.limit}: give at least 1")
    if options.phase and options.phase not in LISTED_PHASES:
        raise UsageError(f"--phase {options.phase!r}: one of {', '.join(LISTED_PHASES)}")
    now = datetime.now(UTC)
    query = visibility_query(options.phase, options.spec or "", options.since, now)
    client: Client = await connect_to(options)
    rows = await run_rows(client, query, options.limit, now, newest_only=bool(options.phase))
    if options.as_json:
        print(json.dumps([row.document() for row in rows], indent=2))
    elif rows:
        print(_text(rows))
    else:
        print(f"no runs match ({query})")
    return 0
