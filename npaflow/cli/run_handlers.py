"""`status`, `cancel` and `pause` against a Temporal server (exit codes: npaflow/cli/exits.py).

The status comes from the run's `status` query, else, with no worker up, from
what the server keeps (memo, current details), and a ledger behind is repaired.
"""

from __future__ import annotations

import asyncio
import sys
import time
from datetime import timedelta
from typing import Any

from pydantic import ValidationError
from temporalio.client import (
    Client,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
)
from temporalio.common import (
    SearchAttributeKey,
    VersioningBehavior,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import WorkflowAlreadyStartedError

from npaflow.cli.exits import (
    StoppedFollowing,
)
from npaflow.cli.follow_run import follow_run
from npaflow.cli.live_view import live_view
from npaflow.cli.report_handler import fetch_report
from npaflow.cli.run_endings import Ending, add_ending, read_ending
from npaflow.cli.status_query import queried_status
from npaflow.cli.status_text import status_text
from npaflow.errors import UsageError
from npaflow.ids import RunId
from npaflow.options.runs import CancelOptions, RunOptions, StatusOptions
from npaflow.runtime.contract import (
    LEDGER_REPAIR_WORKFLOW_TYPE,
    PENDING_LEDGER_QUERY,
    RunMemo,
    SearchAttribute,
    Signal,
)
from npaflow.runtime.messages import ExportLedgerInput, ExportResult
from npaflow.runtime.run_state import MAX_REASON_CHARS
from npaflow.runtime.stalls import stall_lines
from npaflow.runtime.summary import RunStatusView, StatusReport
from npaflow.runtime.vocabulary import RunPhase
from npaflow.temporal.client import connect_to, describe_or_fail
from npaflow.temporal.errors import innermost_message, unreadable_answer_text
from npaflow.temporal.helper_runs import helper_attributes
from npaflow.temporal.pending import open_activities, pending_calls
from npaflow.temporal.serving import pinned_build, unserved_reason


async def _view(handle: WorkflowHandle[Any, Any], repair_with: Client | None = None) -> StatusReport:
    """The live status, from the `status` query, else the server-side memo (no worker up).

    With `repair_with`, a closed run whose ledger is behind gets it written, and an
    open run that no worker serves says so (without waiting on a query nobody answers).
    """
    description = await describe_or_fail(handle)
    closed = description.status != WorkflowExecutionStatus.RUNNING
    unserved = ""
    if repair_with is not None and not closed:
        unserved = await unserved_reason(repair_with, description.task_queue, pinned_build(description))
    execution = description.status.name if description.status else "UNKNOWN"
    ending, unread = Ending(), ""
    try:
        if unserved:
            raise LookupError(unserved)
        if closed and repair_with is not None:
            ending = await read_ending(repair_with, handle)
        if ending.view is None and description.status == WorkflowExecutionStatus.FAILED:
            raise LookupError("failed with no summary: refused before its code ran, nothing to query")
        view = ending.view if ending.view is not None else await _queried(handle, description, repair_with)
        report = StatusReport.of(view, execution)
    except Exception as exc:  # noqa: BLE001 - no worker to answer: fall back to server-side memo
        if isinstance(exc, ValidationError):  # answered, in a shape this npaflow cannot read
            unread = unreadable_answer_text(exc)
        memo = RunMemo.read(await description.memo())
        states = description.typed_search_attributes.get(
            SearchAttributeKey.for_keyword_list(SearchAttribute.STATE.value)
        )
        report = StatusReport(
            run_id=RunId(handle.id),
            phase=memo.phase or ("unknown" if closed else RunPhase.STARTING.value),  # no task ran yet
            current_states=list(states or []),
            ledger_uri=memo.ledger_uri,
            execution_status=execution,
            error=ending.failure,
        )
    if repair_with is not None:
        report = await add_ending(repair_with, description.status, report)
    extra: dict[str, object] = {"worker_version": _worker_version(description)}
    if unserved:
        extra["no_worker"] = unserved
    if unread:
        extra["unreadable_answer"] = unread
    elif not closed and not report.stalled:  # the live view says them; a memo fallback cannot
        extra["stalled"] = stall_lines(pending_calls(await open_activities(description)), time.time())
    if repair_with is not None and closed and report.ledger_behind:
        repair = extra["ledger_repair"] = await _repair_ledger(repair_with, handle, description)
        if repair.startswith("written"):
            extra["ledger_behind"] = ""
    return report.model_copy(update=extra)


async def _queried(
    handle: WorkflowHandle[Any, Any], description: WorkflowExecutionDescription, client: Client | None = None
) -> RunStatusView:
    """The run's answer to its status query (a worker of its version answers), with its jobs' latest word."""
    if client is not None:
        return await live_view(handle, 10, description)
    return await queried_status(handle, 10)


def _worker_version(description: WorkflowExecutionDescription) -> str:
    """The Worker Deployment version the run is pinned to ("unversioned" when none)."""
    info = description.raw_description.workflow_execution_info.versioning_info
    version = info.deployment_version
    if version.build_id:
        behavior = VersioningBehavior(info.behavior).name.lower().replace("_", "-")
        return f"{version.deployment_name}:{version.build_id} ({behavior})"
    return "unversioned"


async def _repair_ledger(
    client: Client, handle: WorkflowHandle[Any, Any], description: WorkflowExecutionDescription
) -> str:
    """Write what a closed run's ledger lacks (its last export failed); say what happened.

    The pending delta lives in the run's history; a worker answers the query by
    replaying it, and a small workflow on the run's task queue exports it.
    """
    try:
        pending = await asyncio.wait_for(
            handle.query(PENDING_LEDGER_QUERY, result_type=ExportLedgerInput), 30
        )
    except Exception as exc:  # noqa: BLE001 - queries need a worker: say so
        return f"not repaired: no worker answered ({type(exc).__name__}); start one and run status again"
    if pending is None:
        return "written: the ledger is current"
    repair_id = f"{handle.id}-ledger-repair-{(description.run_id or '')[:8]}"
    try:
        await client.execute_workflow(
            LEDGER_REPAIR_WORKFLOW_TYPE,
            pending,
            id=repair_id,
            task_queue=description.task_queue,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
            result_type=ExportResult,
            execution_timeout=timedelta(minutes=6),
            search_attributes=helper_attributes(),
        )
    except WorkflowAlreadyStartedError:
        return f"written: repaired earlier ({repair_id})"
    except WorkflowFailureError as error:
        return f"not repaired: {innermost_message(error)}"[:300]
    return f"written now: the ledger holds the run's final state ({repair_id})"


async def status_once(handle: WorkflowHandle[Any, Any]) -> str:
    """The live status, once, as `npaflow status` prints it."""
    return status_text(await _view(handle))


async def status(options: StatusOptions) -> int:
    """Print the run's status once, or until it ends with --watch; repair a ledger left behind."""
    client = await connect_to(options)
    handle = client.get_workflow_handle(options.run_id)
    try:
        if options.watch and not options.as_json:
            queue = (await describe_or_fail(handle)).task_queue

            async def ended() -> bool:
                return (await describe_or_fail(handle)).status != WorkflowExecutionStatus.RUNNING

            await follow_run(client, handle, queue, ended)
            print(status_text(await _view(handle, repair_with=client)))
            if options.write_report:
                print(f"report: {(await fetch_report(client, options.run_id, write=True)).written_uri}")
            return 0
        while True:
            report = await _view(handle, repair_with=client)
            print(report.model_dump_json(indent=2) if options.as_json else status_text(report), flush=True)
            if not options.watch or report.execution_status != "RUNNING":
                break
            await asyncio.sleep(2)
        if options.write_report:
            written = (await fetch_report(client, options.run_id, write=True)).written_uri
            print(f"report: {written}", file=sys.stderr if options.as_json else sys.stdout)
        return 0
    except asyncio.CancelledError:
        if not options.watch:
            raise
        raise StoppedFollowing(handle.id) from None


async def _signal(options: RunOptions, name: Signal, *params: object) -> int:
    client = await connect_to(options)
    handle = client.get_workflow_handle(options.run_id)
    description = await describe_or_fail(handle)
    if description.status != WorkflowExecutionStatus.RUNNING:
        state = description.status.name if description.status else "unknown"
        raise UsageError(f"run {options.run_id} is not running ({state})")
    await handle.signal(name.value, *params)
    print(f"{name.value} sent to {options.run_id}")
    if name is Signal.PAUSE:
        print(f"waves in flight finish, nothing new launches; `npaflow resume {options.run_id}` continues")
    if name is not Signal.CANCEL:
        return 0
    if unserved := await unserved_reason(client, description.task_queue, pinned_build(description)):
        print(
            f"{unserved}; nothing will launch meanwhile, and the run records its cancellation "
            "and ends CANCELED as soon as such a worker picks it up"
        )
    return 0


async def cancel(options: CancelOptions) -> int:
    """Cancel every in-flight job by exact id and end the run CANCELED."""
    if len(options.reason) > MAX_REASON_CHARS:
        raise UsageError(
            f"--reason: at most {MAX_REASON_CHARS:,} characters (this one has {len(options.reason):,}); "
            "say why in a sentence and link to the rest"
        )
    return await _signal(options, Signal.CANCEL, options.reason)


async def pause(options: RunOptions) -> int:
    """Stop launching new waves."""
    return await _signal(options, Signal.PAUSE)


__all__ = ["cancel", "pause", "status", "status_once"]
